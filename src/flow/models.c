/*
 * models.c - the flow engine's queue models (queue.h), one line each; the
 * order is flow.queues' choices' (enum fab_flow_queues follows it).
 */
#include "flow.h"
#include "queue.h"

#define QUEUE_MODELS(X)                                                                                                \
	X(fl_queues_fair)                                                                                              \
	X(fl_queues_fifo)                                                                                              \
	X(fl_queues_dcqcn)                                                                                             \
	/* one line a queue model, above */

#define ENTRY(sym) &sym,
static const struct fl_queue_ops *const models[] = {QUEUE_MODELS(ENTRY)};

const struct fl_queue_ops *fl_queue_model(int i)
{
	FAB_ASSERT(i >= 0 && (size_t)i < FAB_ARRAY_LEN(models));
	return models[i];
}

const char *fab_flow_queue_model(size_t i, const char **doc)
{
	if (i >= FAB_ARRAY_LEN(models))
		return NULL;
	if (doc)
		*doc = models[i]->doc;
	return models[i]->name;
}
