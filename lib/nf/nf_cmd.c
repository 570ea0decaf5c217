/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* NF commands (control method nf.call): the NF names what it serves in
 * its slot (cmds); the manager writes one command at a time into the
 * slot's mailbox (cmd) and rings the NF's doorbell; the packet loop
 * answers between bursts (cmd_reply) and kicks the manager, which replies
 * to the client. One command at a time per NF: no queue, no locks. */

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "nf_pvt.h"
#include "../common/zn_util.h"

static bool
cmd_name_valid(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && strchr("._-", s[i]) == NULL)
			return false;
	return n > 0 && n < ZN_CMD_NAME_LEN;
}

int ZN_API
zn_nf_cmd_register(struct zn_nf *nf, const char *name, zn_nf_cmd_fn fn)
{
	struct zn_nf_slot *s = nf->s;
	uint32_t n;

	if (name == NULL || fn == NULL || !cmd_name_valid(name))
		return -EINVAL;
	n = s->cmds.n;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(s->cmds.name[i], name) == 0)
			return -EEXIST;
	if (n >= ZN_NF_MAX_CMDS)
		return -ENOSPC;
	nf->cmd_fn[n] = fn;
	zn_strlcpy(s->cmds.name[n], name, ZN_CMD_NAME_LEN);
	__atomic_store_n(&s->cmds.n, n + 1, __ATOMIC_RELEASE);
	return 0;
}

void
zn_nf_cmd_reset(struct zn_nf *nf)
{
	struct zn_nf_slot *s = nf->s;

	memset(&s->cmds, 0, sizeof(s->cmds));
	memset(nf->cmd_fn, 0, sizeof(nf->cmd_fn));
	/* What the previous NF of this slot left open is not ours. */
	nf->cmd_gen = __atomic_load_n(&s->cmd.gen, __ATOMIC_ACQUIRE);
	s->cmd_reply.rc = 0;
	s->cmd_reply.len = 0;
	__atomic_store_n(&s->cmd_reply.gen, nf->cmd_gen, __ATOMIC_RELEASE);
}

void
zn_nf_cmd_serve(struct zn_nf *nf)
{
	struct zn_nf_slot *s = nf->s;
	uint32_t gen = __atomic_load_n(&s->cmd.gen, __ATOMIC_ACQUIRE);
	char name[ZN_CMD_NAME_LEN];
	static char args[ZN_CMD_TEXT_LEN];
	uint32_t len = s->cmd.len, n = s->cmds.n;
	int rc = -EOPNOTSUPP;

	if (gen == nf->cmd_gen)
		return;
	/* Copies: the NF's handler never reads the manager's line, and a
	 * bad length cannot take it past the text. */
	zn_strlcpy(name, s->cmd.name, sizeof(name));
	if (len >= sizeof(args))
		len = sizeof(args) - 1;
	memcpy(args, s->cmd.text, len);
	args[len] = '\0';
	s->cmd_reply.text[0] = '\0';
	for (uint32_t i = 0; i < n && i < ZN_NF_MAX_CMDS; i++)
		if (strcmp(s->cmds.name[i], name) == 0 &&
		    nf->cmd_fn[i] != NULL) {
			rc = nf->cmd_fn[i](nf, len ? args : "{}",
					   s->cmd_reply.text,
					   sizeof(s->cmd_reply.text));
			break;
		}
	if (rc == -EOPNOTSUPP && s->cmd_reply.text[0] == '\0')
		snprintf(s->cmd_reply.text, sizeof(s->cmd_reply.text),
			 "NF '%s' has no command '%s'", nf->name, name);
	s->cmd_reply.text[sizeof(s->cmd_reply.text) - 1] = '\0';
	s->cmd_reply.len = (uint32_t)strlen(s->cmd_reply.text);
	s->cmd_reply.rc = rc > 0 ? 0 : rc;
	nf->cmd_gen = gen;
	__atomic_store_n(&s->cmd_reply.gen, gen, __ATOMIC_RELEASE);
	zn_nf_kick_manager(nf);
}
