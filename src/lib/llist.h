/* SPDX-License-Identifier: MIT */
/*
 * Lock-free multi-producer single-consumer list, as the kernel's llist:
 * producers push with one compare-and-swap, the consumer takes the whole
 * list with one exchange.  The taken list is newest-first; reverse it to
 * run entries in arrival (FIFO) order.
 */
#ifndef BLKRING_LIB_LLIST_H
#define BLKRING_LIB_LLIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct llist_node {
	struct llist_node *next;
};

struct llist_head {
	_Atomic(struct llist_node *) first;
};

static inline void llist_init(struct llist_head *h)
{
	atomic_init(&h->first, NULL);
}

static inline bool llist_empty(struct llist_head *h)
{
	return atomic_load_explicit(&h->first, memory_order_relaxed) == NULL;
}

/* Returns true when the list was empty before the push (first arrival). */
static inline bool llist_add(struct llist_node *n, struct llist_head *h)
{
	struct llist_node *first = atomic_load_explicit(&h->first, memory_order_relaxed);

	do {
		n->next = first;
	} while (!atomic_compare_exchange_weak_explicit(&h->first, &first, n, memory_order_release,
	                                                memory_order_relaxed));
	return first == NULL;
}

static inline struct llist_node *llist_del_all(struct llist_head *h)
{
	if (llist_empty(h))
		return NULL;
	return atomic_exchange_explicit(&h->first, NULL, memory_order_acquire);
}

static inline struct llist_node *llist_reverse_order(struct llist_node *n)
{
	struct llist_node *rev = NULL;

	while (n) {
		struct llist_node *next = n->next;

		n->next = rev;
		rev = n;
		n = next;
	}
	return rev;
}

#endif
