/*
 * tp_ib.h - InfiniBand's parameters (fabric.ib.*), read by its credits
 * (src/packet/credit.c).
 */
#ifndef FAB_TP_IB_H
#define FAB_TP_IB_H

#include "../base/base.h"

struct fab_ib_params {
	fab_bytes vl_buffer_bytes; /* each port's buffer per lane, credited to its peer */
};

#endif
