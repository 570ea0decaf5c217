/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/system/test_nf_objects.py: tracks objects, some of
 * them wrongly, for the manager to free (or not) once it is killed.
 *   --make NAME   create ring NAME and track it (the manager frees it)
 *   --spare NAME  create ring NAME, do not track it, and track NAME with
 *                 a wrong address and as the wrong type: the manager must
 *                 leave it alone
 *   --junk        also track a name nothing has
 *   --check NAME  print whether ring NAME exists ("NAME: present/absent")
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <rte_ring.h>

#include <zeronf/zeronf.h>

static const char *make_name, *spare_name, *check_name;
static int junk;

static int
objs_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "make", required_argument, NULL, 'm' },
		{ "spare", required_argument, NULL, 's' },
		{ "junk", no_argument, NULL, 'j' },
		{ "check", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "m:s:jc:", lo, NULL)) != -1) {
		if (c == 'm')
			make_name = optarg;
		else if (c == 's')
			spare_name = optarg;
		else if (c == 'j')
			junk = 1;
		else if (c == 'c')
			check_name = optarg;
		else
			return -EINVAL;
	}
	return 0;
}

static int
objs_init(struct zn_nf *nf)
{
	struct rte_ring *r;
	int rc;

	if (make_name != NULL) {
		r = rte_ring_create(make_name, 64, SOCKET_ID_ANY, 0);
		if (r == NULL)
			return -ENOMEM;
		rc = zn_nf_obj_track(nf, ZN_NF_OBJ_RING, make_name, r);
		if (rc < 0)
			return rc;
	}
	if (spare_name != NULL) {
		r = rte_ring_create(spare_name, 64, SOCKET_ID_ANY, 0);
		if (r == NULL)
			return -ENOMEM;
		rc = zn_nf_obj_track(nf, ZN_NF_OBJ_RING, spare_name,
				     (const char *)r + 64);
		if (rc == 0)
			rc = zn_nf_obj_track(nf, ZN_NF_OBJ_HASH, spare_name,
					     r);
		if (rc < 0)
			return rc;
	}
	if (junk && (rc = zn_nf_obj_track(nf, ZN_NF_OBJ_LPM, "no_such_lpm",
					  &junk)) < 0)
		return rc;
	/* What the API refuses. */
	if (zn_nf_obj_track(nf, 99, "x", &junk) != -EINVAL ||
	    zn_nf_obj_track(nf, ZN_NF_OBJ_RING,
			    "a_name_much_longer_than_thirty_one_bytes",
			    &junk) != -EINVAL ||
	    zn_nf_obj_untrack(nf, &rc) != -ENOENT)
		return -EPROTO;
	if (check_name != NULL) {
		printf("%s: %s\n", check_name,
		       rte_ring_lookup(check_name) != NULL ? "present" :
							     "absent");
		fflush(stdout);
	}
	return 0;
}

static void
objs_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	(void)nf;
	(void)pkts;
	(void)n;
}

static const struct zn_nf_ops objs_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "objs",
	.parse_args = objs_parse,
	.init = objs_init,
	.burst = objs_burst,
};

ZN_NF_REGISTER(objs_ops)
