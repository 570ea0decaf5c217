/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The manager's port headers of each trust group's buffers (port_headers.h):
 * made in its private heap with libzeronf's pool driver (a ring not in
 * DPDK's list of rings), out of DPDK's list of pools (NFs do not map
 * that heap, and a process looking a ring or a pool up reads every listed
 * one's name), each paired with a buffer of the group for good.
 */

#include <errno.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../core/mgr.h"
#include "owner_map.h"
#include "port_headers.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_util.h"

/* A header: the mbuf, its buffer's address, the object header */
#define HDR_PRIV RTE_ALIGN_CEIL(sizeof(void *), RTE_MBUF_PRIV_ALIGN)
#define HDR_ELT (sizeof(struct rte_mbuf) + HDR_PRIV + 128)

static bool
wanted(const struct zn_mgr *m)
{
	return m->cfg.validate && m->cfg.n_groups != 0;
}

size_t
zn_port_headers_bytes(const struct zn_mgr *m)
{
	size_t b = 0;

	if (!wanted(m))
		return 0;
	/* each group's headers (no caches) and their map: an entry per
	 * 2^own_shift bytes of the pool, fewer than two per buffer */
	for (unsigned int g = 0; g < m->cfg.n_groups; g++)
		b += (size_t)m->cfg.groups[g].n_mbufs *
		     (HDR_ELT + 4 * sizeof(void *)) +
		     sizeof(struct rte_mempool) + (64u << 10);
	return b;
}

/* Pairing a header with each buffer of the group, in order: the pool's
 * objects (obj_iter's order) with the map's buffers. */
struct pairing {
	struct zn_port_headers *sh;
	size_t at; /* next entry of the map to look at */
	unsigned int paired;
};

static void
pair_one(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct pairing *p = arg;
	const struct zn_owner_map *d = p->sh->d;
	struct rte_mbuf *h = obj, *b;
	char *buf;

	(void)mp;
	(void)idx;
	while (p->at < p->sh->n_of && d->own[p->at].start == ZN_OWN_NONE)
		p->at++;
	if (p->at == p->sh->n_of)
		return; /* more headers than buffers: never (sized so) */
	b = (struct rte_mbuf *)(d->lo + (p->at << d->own_shift) +
				d->own[p->at].start);
	*(struct rte_mbuf **)rte_mbuf_to_priv(h) = b;
	buf = zn_owner_map_buf(d, b);
	h->buf_addr = buf;
	rte_mbuf_iova_set(h, zn_owner_map_iova(d, (uintptr_t)buf));
	h->buf_len = d->buf_len;
	p->sh->hdr_of[p->at++] = h;
	p->paired++;
}

static void
shadow_free(struct zn_port_headers *sh)
{
	if (sh == NULL)
		return;
	/* Its ring again: rte_mempool_free empties the ring through the
	 * pool's driver, and from the source that would take the group's
	 * buffers */
	if (sh->mp != NULL)
		zn_pool_ops_set_source(sh->mp, NULL, NULL, NULL);
	rte_mempool_free(sh->mp);
	rte_free(sh->hdr_of);
	rte_free(sh);
}

static int
shadow_make(struct zn_mgr *m, unsigned int g)
{
	const struct zn_owner_map *d = &m->trust.owner_maps[g + 1];
	char name[RTE_MEMPOOL_NAMESIZE];
	struct zn_port_headers *sh;
	struct pairing pr;
	int rc = -ENOMEM;

	sh = rte_zmalloc_socket("zn_shadow", sizeof(*sh), 0, m->priv.socket);
	if (sh == NULL)
		return -ENOMEM;
	sh->d = d;
	sh->n_of = ((d->hi - d->lo) >> d->own_shift) + 1;
	sh->hdr_of = rte_zmalloc_socket("zn_shadow", sh->n_of *
					sizeof(*sh->hdr_of), 0,
					m->priv.socket);
	/* One header per buffer of the group, its private area naming the
	 * buffer; no cache: every get and put goes to port_headers_hot.c (a
	 * header is free exactly while its buffer is). */
	snprintf(name, sizeof(name), "zn_shadow%u", g);
	sh->mp = sh->hdr_of == NULL ? NULL :
		 rte_pktmbuf_pool_create_by_ops(name, m->cfg.groups[g].n_mbufs,
						0, HDR_PRIV, 0, m->priv.socket,
						ZN_POOL_OPS);
	if (sh->mp == NULL)
		goto fail;
	zn_pool_unlist(sh->mp);
	/* The room a driver sees (ethdev checks it against the port): the
	 * group's buffers' */
	((struct rte_pktmbuf_pool_private *)rte_mempool_get_priv(sh->mp))
		->mbuf_data_room_size = d->buf_len;
	pr = (struct pairing){ .sh = sh };
	rte_mempool_obj_iter(sh->mp, pair_one, &pr);
	rc = pr.paired == sh->mp->size ? 0 : -EINVAL;
	if (rc == 0)
		rc = zn_pool_ops_set_source(sh->mp, zn_port_headers_take,
					    zn_port_headers_give, sh);
	if (rc < 0)
		goto fail;
	m->trust.group[g].port_headers = sh;
	return 0;
fail:
	if (rc == -ENOMEM && rte_errno != 0)
		rc = -rte_errno;
	shadow_free(sh);
	return rc;
}

int
zn_port_headers_init(struct zn_mgr *m)
{
	if (!wanted(m))
		return 0;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		int rc;

		if (m->trust.group[g].pool == NULL)
			continue;
		rc = shadow_make(m, g);
		if (rc < 0) {
			ZN_LOG(ERR, "trust group '%s': cannot make its port "
			       "headers: %s", m->cfg.groups[g].name,
			       strerror(-rc));
			return rc;
		}
	}
	m->trust.port_headers = true;
	return 0;
}

bool
zn_port_headers_port(const struct zn_mgr *m, uint16_t p)
{
	return p < ZN_MAX_PORTS && m->ports[p].group != NULL &&
	       m->ports[p].group->port_headers != NULL;
}

void
zn_port_headers_fini(struct zn_mgr *m)
{
	m->trust.port_headers = false;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		shadow_free(m->trust.group[g].port_headers);
		m->trust.group[g].port_headers = NULL;
	}
}
