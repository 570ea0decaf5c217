/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Tenants (Europa's isolated virtual routers), control side: the options
 * that make them, the checks that keep each inside its own services and
 * ports (tenant.list: tenant_cmds.c). What isolates a tenant:
 * - memory: it is a trust group (mgr/trust/group.c): its NFs map its pool only;
 *   a packet of its slice is copied into its pool on the way in (none
 *   when it owns the whole port: the port receives into its pool);
 * - traffic: its slices (tenant_hot.c) give its packets its chain; its
 *   NFs register only its services (zn_tenant_svc_ok); whatever its NFs
 *   send to another tenant's NF or port drops as cross_tenant (worker.c),
 *   and links (mgr/nf/link.c) never join two groups;
 * - load: a sliced port waits for no tenant (worker.c no_wait): what one
 *   tenant's first hop cannot take drops, counted for it, and its pool
 *   bounds the memory its packets hold.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "../core/mgr.h"
#include "tenant.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../core/subsys.h"

/* One OPTION=VALUE after --tenant's group: services=LO-HI, uid=N,
 * cpu=PERCENT (of one CPU), mem=MB. */
static int
tenant_option(struct zn_tenant_cfg *t, const char *kv, size_t n)
{
	char v[32];
	const char *dash;
	uint64_t lo, hi;

	static const struct {
		const char *key;
		uint64_t max;
	} nums[] = { { "uid=", INT32_MAX - 1 }, { "cpu=", 100 * 1024 },
		     { "mem=", 1u << 24 } };

	for (unsigned int i = 0; i < RTE_DIM(nums); i++) {
		if (n <= 4 || strncmp(kv, nums[i].key, 4) != 0)
			continue;
		if (n - 4 >= sizeof(v))
			return -EINVAL;
		memcpy(v, kv + 4, n - 4);
		v[n - 4] = '\0';
		if (zn_parse_uint(v, i == 0 ? 0 : 1, nums[i].max, &lo))
			return -EINVAL;
		if (i == 0)
			t->uid = (int)lo;
		else if (i == 1)
			t->cpu_pct = (unsigned int)lo;
		else
			t->mem_mb = (unsigned int)lo;
		return 0;
	}
	if (n <= 9 || strncmp(kv, "services=", 9) != 0 || n - 9 >= sizeof(v))
		return -EINVAL;
	memcpy(v, kv + 9, n - 9);
	v[n - 9] = '\0';
	if ((dash = strchr(v, '-')) == NULL)
		return -EINVAL;
	v[dash - v] = '\0';
	if (zn_parse_uint(v, 1, ZN_STEP_MAX_SERVICE, &lo) ||
	    zn_parse_uint(dash + 1, lo, ZN_STEP_MAX_SERVICE, &hi))
		return -EINVAL;
	t->svc_lo = (uint16_t)lo;
	t->svc_hi = (uint16_t)hi;
	return 0;
}

/* --tenant NAME=GROUP[,services=LO-HI][,uid=N][,cpu=PCT][,mem=MB] */
static int
zn_tenant_parse(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	struct zn_tenant_cfg *t = &cfg->tenants[cfg->n_tenants];
	const char *eq = strchr(arg, '='), *comma;
	size_t n;

	if (cfg->n_tenants >= ZN_MAX_TENANTS) {
		fprintf(stderr, "%s: at most %u --tenant\n", prog,
			ZN_MAX_TENANTS);
		return -EINVAL;
	}
	memset(t, 0, sizeof(*t));
	t->uid = -1;
	comma = eq != NULL ? strchr(eq, ',') : NULL;
	n = comma != NULL ? (size_t)(comma - eq - 1) : (eq ? strlen(eq + 1) : 0);
	if (eq == NULL || eq == arg || (size_t)(eq - arg) >= sizeof(t->name) ||
	    n == 0 || n >= sizeof(t->group_name)) {
		fprintf(stderr, "%s: --tenant '%s': NAME=GROUP[,services=LO-HI]"
			"[,uid=N][,cpu=PCT][,mem=MB], such as red=red,"
			"services=10-19\n", prog, arg);
		return -EINVAL;
	}
	memcpy(t->name, arg, (size_t)(eq - arg));
	memcpy(t->group_name, eq + 1, n);
	if (!zn_instance_name_valid(t->name)) {
		fprintf(stderr, "%s: --tenant: bad name '%s' (letters, digits, "
			"'_', '-')\n", prog, t->name);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < cfg->n_tenants; i++)
		if (strcmp(cfg->tenants[i].name, t->name) == 0) {
			fprintf(stderr, "%s: --tenant '%s' given twice\n", prog,
				t->name);
			return -EINVAL;
		}
	while (comma != NULL) {
		const char *kv = comma + 1;

		comma = strchr(kv, ',');
		n = comma != NULL ? (size_t)(comma - kv) : strlen(kv);
		if (tenant_option(t, kv, n) < 0) {
			fprintf(stderr, "%s: --tenant '%s': after the group, "
				"services=LO-HI (1 <= LO <= HI <= %d), uid=N, "
				"cpu=PERCENT (1..102400) or mem=MB\n", prog, arg,
				ZN_STEP_MAX_SERVICE);
			return -EINVAL;
		}
	}
	cfg->n_tenants++;
	return 0;
}

static int
parse_match(const char *kv, struct zn_slice_cfg *s)
{
	unsigned int b[6];
	char addr[64], *slash;
	uint64_t v;
	char end;

	if (strncmp(kv, "vlan=", 5) == 0) {
		if (zn_parse_uint(kv + 5, 1, 4094, &v))
			return -EINVAL;
		s->kind = ZN_SLICE_VLAN;
		s->vlan = (uint16_t)v;
		return 0;
	}
	if (strncmp(kv, "mac=", 4) == 0) {
		if (strlen(kv + 4) != 17 ||
		    sscanf(kv + 4, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1],
			   &b[2], &b[3], &b[4], &b[5], &end) != 6)
			return -EINVAL;
		for (int i = 0; i < 6; i++)
			s->mac[i] = (uint8_t)b[i];
		s->kind = ZN_SLICE_MAC;
		return 0;
	}
	if (strncmp(kv, "prefix=", 7) != 0 ||
	    strlen(kv + 7) >= sizeof(addr))
		return -EINVAL;
	zn_strlcpy(addr, kv + 7, sizeof(addr));
	if ((slash = strchr(addr, '/')) == NULL)
		return -EINVAL;
	*slash = '\0';
	s->v6 = strchr(addr, ':') != NULL;
	if (inet_pton(s->v6 ? AF_INET6 : AF_INET, addr, s->addr) != 1 ||
	    zn_parse_uint(slash + 1, 0, s->v6 ? 128 : 32, &v))
		return -EINVAL;
	s->plen = (uint8_t)v;
	for (unsigned int bit = s->plen; bit < (s->v6 ? 128u : 32u); bit++)
		if (s->addr[bit / 8] & (0x80 >> (bit % 8)))
			return -EDOM; /* host bits set */
	s->kind = ZN_SLICE_PREFIX;
	return 0;
}

/* --slice TENANT:PORT[:vlan=V|:mac=M|:prefix=A/L] */
static int
zn_slice_parse(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	struct zn_slice_cfg *s = &cfg->slices[cfg->n_slices];
	const char *c1 = strchr(arg, ':'), *c2;
	char num[16] = "";
	uint64_t p;
	int rc;

	if (cfg->n_slices >= ZN_MAX_SLICES) {
		fprintf(stderr, "%s: at most %u --slice\n", prog,
			ZN_MAX_SLICES);
		return -EINVAL;
	}
	memset(s, 0, sizeof(*s));
	c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
	if (c1 == NULL || c1 == arg ||
	    (size_t)(c1 - arg) >= sizeof(s->tenant_name) ||
	    (size_t)((c2 ? c2 : c1 + strlen(c1)) - c1 - 1) >= sizeof(num)) {
		fprintf(stderr, "%s: --slice '%s': TENANT:PORT[:vlan=V|:mac=M|"
			":prefix=A/L], such as red:0:vlan=10\n", prog, arg);
		return -EINVAL;
	}
	memcpy(s->tenant_name, arg, (size_t)(c1 - arg));
	memcpy(num, c1 + 1, (size_t)((c2 ? c2 : c1 + strlen(c1)) - c1 - 1));
	if (zn_parse_uint(num, 0, ZN_MAX_PORT_ARGS - 1, &p)) {
		fprintf(stderr, "%s: --slice '%s': bad port '%s'\n", prog, arg,
			num);
		return -EINVAL;
	}
	s->port = (uint16_t)p;
	s->kind = ZN_SLICE_PORT;
	if (c2 != NULL && (rc = parse_match(c2 + 1, s)) < 0) {
		fprintf(stderr, "%s: --slice '%s': %s\n", prog, arg,
			rc == -EDOM ? "the prefix has bits set past its length"
				    : "vlan=1..4094, mac=aa:bb:cc:dd:ee:ff or "
				      "prefix=ADDRESS/LENGTH");
		return -EINVAL;
	}
	cfg->n_slices++;
	return 0;
}

static bool
same_match(const struct zn_slice_cfg *a, const struct zn_slice_cfg *b)
{
	if (a->port != b->port || a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ZN_SLICE_VLAN:
		return a->vlan == b->vlan;
	case ZN_SLICE_MAC:
		return memcmp(a->mac, b->mac, 6) == 0;
	case ZN_SLICE_PREFIX:
		return a->v6 == b->v6 && a->plen == b->plen &&
		       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
	default:
		return true; /* two whole-port slices */
	}
}

static int
resolve_slices(const char *prog, struct zn_mgr_cfg *cfg)
{
	for (unsigned int i = 0; i < cfg->n_slices; i++) {
		struct zn_slice_cfg *s = &cfg->slices[i];
		unsigned int t;

		for (t = 0; t < cfg->n_tenants; t++)
			if (strcmp(cfg->tenants[t].name, s->tenant_name) == 0)
				break;
		if (t == cfg->n_tenants) {
			fprintf(stderr, "%s: --slice: no --tenant %s\n", prog,
				s->tenant_name);
			return -EINVAL;
		}
		s->tenant = (uint8_t)t;
		if (s->port >= cfg->n_devargs) {
			fprintf(stderr, "%s: --slice names port %u but only %u "
				"port(s) are given\n", prog, s->port,
				cfg->n_devargs);
			return -EINVAL;
		}
		for (unsigned int j = 0; j < i; j++)
			if (same_match(&cfg->slices[j], s)) {
				fprintf(stderr, "%s: --slice: port %u's slice "
					"given twice (%s, %s)\n", prog, s->port,
					cfg->slices[j].tenant_name,
					s->tenant_name);
				return -EINVAL;
			}
	}
	/* A port one tenant has whole receives into its pool: no copy. */
	for (unsigned int i = 0; i < cfg->n_slices; i++) {
		const struct zn_slice_cfg *s = &cfg->slices[i];
		unsigned int g = cfg->tenants[s->tenant].group;
		bool alone = s->kind == ZN_SLICE_PORT;

		for (unsigned int j = 0; j < cfg->n_slices && alone; j++)
			alone = j == i || cfg->slices[j].port != s->port;
		if (!alone) {
			continue;
		} else if (cfg->port_group[s->port] == 0) {
			cfg->port_group[s->port] = g;
		} else if (cfg->port_group[s->port] != g) {
			fprintf(stderr, "%s: --port-group %u is not tenant "
				"%s's group\n", prog, s->port,
				cfg->tenants[s->tenant].name);
			return -EINVAL;
		}
	}
	return 0;
}

static int
zn_tenant_resolve(const char *prog, struct zn_mgr_cfg *cfg)
{
	if (cfg->n_tenants != 0 && cfg->fdir_rehash) {
		/* It classifies again at every hop, without tenants. */
		fprintf(stderr, "%s: --fdir-rehash (a benchmark baseline) "
			"does not know tenants\n", prog);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < cfg->n_tenants; i++) {
		struct zn_tenant_cfg *t = &cfg->tenants[i];
		unsigned int g;

		for (g = 0; g < cfg->n_groups; g++)
			if (strcmp(cfg->groups[g].name, t->group_name) == 0)
				break;
		if (g == cfg->n_groups) {
			fprintf(stderr, "%s: --tenant %s: no --trust-group %s\n",
				prog, t->name, t->group_name);
			return -EINVAL;
		}
		t->group = g + 1;
		for (unsigned int j = 0; j < i; j++) {
			const struct zn_tenant_cfg *o = &cfg->tenants[j];

			if (o->group == t->group) {
				fprintf(stderr, "%s: --tenant %s and %s: one "
					"trust group each\n", prog, o->name,
					t->name);
				return -EINVAL;
			}
			if (t->svc_lo != 0 && o->svc_lo != 0 &&
			    t->svc_lo <= o->svc_hi && o->svc_lo <= t->svc_hi) {
				fprintf(stderr, "%s: --tenant %s and %s: their "
					"services overlap\n", prog, o->name,
					t->name);
				return -EINVAL;
			}
		}
	}
	return resolve_slices(prog, cfg);
}

/* Build m->tn from the options (NULL when there is no tenant). 0 or
 *  -errno. After the ports and groups. */
static int
zn_tenant_init(struct zn_mgr *m)
{
	const struct zn_mgr_cfg *c = &m->cfg;
	struct zn_tenants *tn;
	unsigned int k = 0;

	if (c->n_tenants == 0)
		return 0;
	tn = calloc(1, sizeof(*tn));
	if (tn == NULL)
		return -ENOMEM;
	for (unsigned int t = 0; t < c->n_tenants; t++) {
		tn->grp_tenant[c->tenants[t].group] = (uint8_t)(t + 1);
		for (unsigned int s = c->tenants[t].svc_lo;
		     s != 0 && s <= c->tenants[t].svc_hi; s++)
			tn->svc_tenant[s] = (uint8_t)(t + 1);
	}
	/* Match slices by port, in the order given (the first match wins). */
	for (unsigned int p = 0; p < ZN_MAX_PORTS; p++) {
		tn->first[p] = (uint16_t)k;
		for (unsigned int i = 0; i < c->n_slices; i++) {
			const struct zn_slice_cfg *s = &c->slices[i];

			if (s->port != p)
				continue;
			tn->port_mask[p] |= (uint16_t)(1u << s->tenant);
			if (s->kind == ZN_SLICE_PORT)
				tn->port_rest[p] = (uint8_t)(s->tenant + 1);
			else
				tn->match[k++] = *s;
		}
		tn->n_match[p] = (uint16_t)(k - tn->first[p]);
	}
	m->tn = tn;
	return 0;
}

static void
zn_tenant_fini(struct zn_mgr *m)
{
	free(m->tn);
	m->tn = NULL;
}

int
zn_tenant_find(const struct zn_mgr *m, const char *name)
{
	for (unsigned int t = 0; t < m->cfg.n_tenants; t++)
		if (strcmp(m->cfg.tenants[t].name, name) == 0)
			return (int)t;
	return -ENOENT;
}

int
zn_tenant_scoped_name(const struct zn_mgr *m, unsigned int t,
		      const char *name, char *buf, size_t len)
{
	int n = t == 0 || t > m->cfg.n_tenants ?
		snprintf(buf, len, "%s", name) :
		snprintf(buf, len, "%s:%s", m->cfg.tenants[t - 1].name, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *
zn_tenant_shown_name(const struct zn_mgr *m, unsigned int t,
		     const char *name)
{
	size_t n;

	if (t == 0 || t > m->cfg.n_tenants)
		return name;
	n = strlen(m->cfg.tenants[t - 1].name);
	return strncmp(name, m->cfg.tenants[t - 1].name, n) == 0 &&
	       name[n] == ':' ? name + n + 1 : name;
}

bool
zn_tenant_svc_ok(const struct zn_mgr *m, uint32_t group, uint16_t svc,
		 char *err, size_t errlen)
{
	unsigned int t, owner;

	if (m->tn == NULL || group > ZN_MAX_GROUPS || svc >= ZN_MAX_SERVICES)
		return true;
	t = m->tn->grp_tenant[group];
	owner = m->tn->svc_tenant[svc];
	if (owner == t)
		return true;
	if (t == 0)
		snprintf(err, errlen, "service %u is tenant %s's", svc,
			 m->cfg.tenants[owner - 1].name);
	else
		snprintf(err, errlen, "tenant %s's NFs register its services "
			 "only (%u-%u)", m->cfg.tenants[t - 1].name,
			 m->cfg.tenants[t - 1].svc_lo,
			 m->cfg.tenants[t - 1].svc_hi);
	return false;
}

bool
zn_tenant_port_sliced(const struct zn_mgr *m, unsigned int port)
{
	return m->tn != NULL && port < ZN_MAX_PORTS && m->tn->port_mask[port];
}

int
zn_tenant_steps_check(const struct zn_mgr *m, int tenant,
		     const struct zn_step *steps, unsigned int n, char *err,
		     size_t errlen)
{
	int owner = tenant >= 0 ? tenant + 1 : -1; /* -1: not known yet */

	if (m->tn == NULL)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		int o;

		if (steps[i].host != 0 && tenant >= 0) {
			snprintf(err, errlen, "hop %u: on host %u: a tenant's "
				 "chain stays on this host", i, steps[i].host);
			return -EPERM;
		}
		if (steps[i].type != ZN_STEP_SERVICE || steps[i].host != 0 ||
		    steps[i].id >= ZN_MAX_SERVICES)
			continue; /* another host's services are its own */
		o = m->tn->svc_tenant[steps[i].id];
		if (owner < 0) {
			owner = o;
		} else if (o != owner) {
			if (tenant >= 0)
				snprintf(err, errlen, "hop %u: service %u is "
					 "not tenant %s's", i, steps[i].id,
					 m->cfg.tenants[tenant].name);
			else
				snprintf(err, errlen, "hop %u: service %u and "
					 "an earlier hop are of different "
					 "tenants (a tenant's NFs send only "
					 "within it)", i, steps[i].id);
			return -EPERM;
		}
	}
	for (unsigned int i = 0; i < n && owner > 0; i++)
		if (steps[i].host != 0) {
			snprintf(err, errlen, "hop %u: on host %u: a tenant's "
				 "chain stays on this host", i, steps[i].host);
			return -EPERM;
		} else if (steps[i].type == ZN_STEP_PORT &&
		    (steps[i].id >= ZN_MAX_PORTS ||
		     !((m->tn->port_mask[steps[i].id] >> (owner - 1)) & 1))) {
			snprintf(err, errlen, "hop %u: port %u has no slice of "
				 "tenant %s", i, steps[i].id,
				 m->cfg.tenants[owner - 1].name);
			return -EPERM;
		}
	return 0;
}

static const struct zn_subsys subsys = {
	.name = "tenants", .order = ZN_SUBSYS_TENANTS,
	.init = zn_tenant_init, .fini = zn_tenant_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static const struct zn_opt tenant_opt[] = {
	{ "tenant", 0, "NAME=GROUP[,services=LO-HI][,uid=N][,cpu=PCT][,mem=MB]",
	  "a tenant (an isolated virtual router): trust group\nGROUP, service "
	  "ids LO..HI, its own chain and a control\nsocket user N may use; its "
	  "launched NFs together\nget PCT % of a CPU and MB of memory "
	  "(docs/security.md)", ZN_OPT_PARSE, .parse = zn_tenant_parse },
	{ "slice", 0, "TENANT:PORT[:vlan=V|:mac=M|:prefix=A/L]", "what of port "
	  "PORT is TENANT's: all of it, or packets\nof a VLAN, a destination "
	  "MAC or IP prefix", ZN_OPT_PARSE, .parse = zn_slice_parse },
};

/* Once every option is read (trust groups' after): names to indexes,
 * overlaps refused. */
static const struct zn_opts tenant_opts = {
	.order = ZN_SUBSYS_TENANTS, .opt = tenant_opt,
	.n = RTE_DIM(tenant_opt), .check = zn_tenant_resolve,
};
ZN_OPTIONS_REGISTER(tenant_opts)
