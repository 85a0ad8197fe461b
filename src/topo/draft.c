/*
 * draft.c - adding nodes and links to a topology draft (draft.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draft.h"

uint32_t fab_draft_add_node(struct draft *d, int kind, uint32_t tier, const char *name)
{
	if (d->nnodes == d->cap_nodes) {
		d->cap_nodes = d->cap_nodes ? 2 * d->cap_nodes : 64;
		d->nodes = fab_xrealloc(d->nodes, d->cap_nodes, sizeof *d->nodes);
	}
	struct fab_node *n = &d->nodes[d->nnodes];
	memset(n, 0, sizeof *n);
	n->kind = kind;
	n->tier = tier;
	n->server = -1;
	n->nic = -1;
	snprintf(n->name, sizeof n->name, "%s", name);
	return d->nnodes++;
}

void fab_draft_add_link(struct draft *d, uint32_t a, uint32_t b, fab_rate_bps rate, fab_time_ps delay)
{
	if (d->nlinks == d->cap_links) {
		d->cap_links = d->cap_links ? 2 * d->cap_links : 64;
		d->links = fab_xrealloc(d->links, d->cap_links, sizeof *d->links);
	}
	d->links[d->nlinks++] = (struct draft_link){a, b, rate, delay};
}

void fab_draft_free(struct draft *d)
{
	free(d->nodes);
	free(d->links);
}
