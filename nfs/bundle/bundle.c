/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * zeronf-bundle: several NFs run to completion in one thread
 * (include/zeronf/bundle.h). Each NF is the shared module its build makes
 * beside its program (zeronf-NAME.so, ZN_NF_REGISTER's zn_nf_module_ops);
 * each gets the bundle's library options and its own service, name and
 * NF options:
 *
 *     zeronf-bundle [library options] -- \
 *         --nf MODULE:SERVICE[:NAME] [NF options] [--nf ...]
 *
 * MODULE: a path to a module, or an NF's name (forward, zeronf-forward)
 * looked up beside this program. NAME defaults to BUNDLE-K (the bundle's
 * --name, K the NF's place); a bundle replica's suffix (".2" of a --name
 * "front.2", as the manager's launcher names replicas) is added to each.
 * The manager's nf.start {"bundle": [...]} writes this command line.
 *
 * A module named twice is loaded from a copy (an anonymous file of its
 * own): two NFs of one kind keep their own globals.
 */

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zeronf/bundle.h>

#define MAX_LIB_ARGS 32

struct member {
	char module[PATH_MAX];
	char service[8];
	char name[64];
	int first_arg, n_args; /* its NF options in argv */
	void *dl;
	const struct zn_nf_ops *ops;
};

static void
usage(FILE *out, const char *prog)
{
	fprintf(out,
		"Usage: %s [library options] -- --nf MODULE:SERVICE[:NAME] "
		"[NF options] [--nf ...]\n"
		"Runs up to %d NFs in one thread, each burst carried through "
		"them in turn.\n"
		"Library options as any NF's (-i, -n, --cpus, --trust-group, "
		"--log-level, --wait); -s is each NF's own.\n"
		"MODULE: a path to an NF module (zeronf-NAME.so), or an NF's "
		"name (forward) looked up beside %s.\n", prog, ZN_BUNDLE_MAX,
		prog);
}

/* Options of libzeronf that take a value (nf_args.c). */
static bool
takes_value(const char *o)
{
	static const char *const v[] = { "-i", "--instance", "-s",
					 "--service", "-n", "--name",
					 "--cpus", "--trust-group",
					 "--log-level", "--wait", "--guest" };

	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		if (strcmp(o, v[k]) == 0)
			return true;
	return false;
}

/* A bare NF name: zeronf-NAME.so beside this program. */
static int
module_path(const char *spec, char *out, size_t len)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (strchr(spec, '/') != NULL) {
		if (strlen(spec) >= len)
			return -ENAMETOOLONG;
		strcpy(out, spec);
		return 0;
	}
	for (const char *c = spec; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			return -EINVAL;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	if (snprintf(out, len, "%s/%s%s.so", self,
		     strncmp(spec, "zeronf-", 7) == 0 ? "" : "zeronf-", spec) >=
	    (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* @p path loaded, or a copy of it when loaded already (its globals
 * would be the other NF's). */
static void *
load(const char *path, bool again)
{
	char fdpath[64];
	struct stat st;
	int in, fd;
	void *dl;

	if (!again)
		return dlopen(path, RTLD_NOW | RTLD_LOCAL);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0) {
		if (in >= 0)
			close(in);
		return NULL;
	}
	fd = memfd_create("zeronf-bundle-module", MFD_CLOEXEC);
	if (fd < 0 || sendfile(fd, in, NULL, (size_t)st.st_size) !=
		      st.st_size) {
		close(in);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(in);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	dl = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
	close(fd); /* mapped: the file stays while it is */
	return dl;
}

/* "MODULE:SERVICE[:NAME]" into @p m. */
static int
parse_spec(const char *prog, const char *spec, struct member *m)
{
	char buf[PATH_MAX + 96], *svc, *name, *end;
	long s;
	int rc;

	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, spec);
	/* from the right: a module's path may have a colon */
	svc = strrchr(buf, ':');
	if (svc == NULL) {
		fprintf(stderr, "%s: --nf %s: MODULE:SERVICE[:NAME]\n", prog,
			spec);
		return -EINVAL;
	}
	*svc++ = '\0';
	name = NULL;
	end = strrchr(buf, ':');
	if (end != NULL && end[1] != '\0' &&
	    strspn(end + 1, "0123456789") == strlen(end + 1)) {
		name = svc; /* MODULE:SERVICE:NAME */
		*end = '\0';
		svc = end + 1;
	}
	errno = 0;
	s = strtol(svc, &end, 10);
	if (errno != 0 || *end != '\0' || end == svc || s < 1 || s > 65535) {
		fprintf(stderr, "%s: --nf %s: bad service '%s'\n", prog, spec,
			svc);
		return -EINVAL;
	}
	snprintf(m->service, sizeof(m->service), "%ld", s);
	if (name != NULL && (name[0] == '\0' ||
			     strlen(name) >= sizeof(m->name) - 8)) {
		fprintf(stderr, "%s: --nf %s: bad name\n", prog, spec);
		return -EINVAL;
	}
	snprintf(m->name, sizeof(m->name), "%s", name != NULL ? name : "");
	rc = module_path(buf, m->module, sizeof(m->module));
	if (rc < 0)
		fprintf(stderr, "%s: --nf %s: bad module '%s'\n", prog, spec,
			buf);
	return rc;
}

int
main(int argc, char **argv)
{
	struct member m[ZN_BUNDLE_MAX];
	struct zn_bundle_nf nfs[ZN_BUNDLE_MAX];
	char *lib[MAX_LIB_ARGS], suffix[16] = "";
	const char *prog = argv[0], *bname = "bundle";
	int n_lib = 0, i = 1, n = 0, rc;

	/* library options before "--": ours minus -s (each NF's own) */
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *o = argv[i];

		if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
			usage(stdout, prog);
			return 0;
		}
		if (takes_value(o) && i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", prog, o);
			return 2;
		}
		if (strcmp(o, "-n") == 0 || strcmp(o, "--name") == 0) {
			bname = argv[++i];
			continue;
		}
		if (strcmp(o, "-s") == 0 || strcmp(o, "--service") == 0) {
			i++;
			continue;
		}
		if (n_lib + 2 > MAX_LIB_ARGS) {
			fprintf(stderr, "%s: too many options\n", prog);
			return 2;
		}
		lib[n_lib++] = argv[i];
		if (takes_value(o))
			lib[n_lib++] = argv[++i];
	}
	/* "front.2": replica 2 of the launch "front" */
	{
		const char *dot = strrchr(bname, '.');

		if (dot != NULL && dot[1] != '\0' &&
		    strspn(dot + 1, "0123456789") == strlen(dot + 1) &&
		    strlen(dot) < sizeof(suffix))
			strcpy(suffix, dot);
	}
	for (i++; i < argc; i++) {
		if (strcmp(argv[i], "--nf") != 0) {
			if (n == 0) {
				fprintf(stderr, "%s: '%s': members start with "
					"--nf MODULE:SERVICE[:NAME]\n", prog,
					argv[i]);
				return 2;
			}
			m[n - 1].n_args++;
			continue;
		}
		if (n == ZN_BUNDLE_MAX) {
			fprintf(stderr, "%s: at most %d NFs\n", prog,
				ZN_BUNDLE_MAX);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: --nf needs MODULE:SERVICE\n", prog);
			return 2;
		}
		memset(&m[n], 0, sizeof(m[n]));
		if (parse_spec(prog, argv[++i], &m[n]) < 0)
			return 2;
		m[n].first_arg = i + 1;
		n++;
	}
	if (n == 0) {
		usage(stderr, prog);
		return 2;
	}
	for (int k = 0; k < n; k++) {
		const struct zn_nf_ops *(*get)(void);
		char name[64];
		bool again = false;

		for (int j = 0; j < k; j++)
			again |= strcmp(m[j].module, m[k].module) == 0;
		m[k].dl = load(m[k].module, again);
		if (m[k].dl == NULL) {
			fprintf(stderr, "%s: cannot load %s: %s\n", prog,
				m[k].module, dlerror());
			return 1;
		}
		get = (const struct zn_nf_ops *(*)(void))dlsym(
			m[k].dl, "zn_nf_module_ops");
		if (get == NULL || (m[k].ops = get()) == NULL) {
			fprintf(stderr, "%s: %s is no ZeroNF NF module (no "
				"zn_nf_module_ops: ZN_NF_REGISTER)\n", prog,
				m[k].module);
			return 1;
		}
		if (m[k].name[0] != '\0')
			snprintf(name, sizeof(name), "%s%s", m[k].name, suffix);
		else
			snprintf(name, sizeof(name), "%.*s-%d%s",
				 (int)(strlen(bname) - strlen(suffix)), bname,
				 k, suffix);
		strcpy(m[k].name, name);
	}
	/* each NF's command line, as its own program's would be */
	for (int k = 0; k < n; k++) {
		char **av;
		int ac = 0;

		av = calloc((size_t)(n_lib + m[k].n_args + 8), sizeof(*av));
		if (av == NULL) {
			while (k-- > 0)
				free(nfs[k].argv);
			return 1;
		}
		av[ac++] = (char *)(uintptr_t)m[k].ops->name;
		for (int j = 0; j < n_lib; j++)
			av[ac++] = lib[j];
		av[ac++] = (char *)(uintptr_t)"-s";
		av[ac++] = m[k].service;
		av[ac++] = (char *)(uintptr_t)"-n";
		av[ac++] = m[k].name;
		av[ac++] = (char *)(uintptr_t)"--";
		for (int j = 0; j < m[k].n_args; j++)
			av[ac++] = argv[m[k].first_arg + j];
		av[ac] = NULL;
		nfs[k] = (struct zn_bundle_nf){ .ops = m[k].ops, .argc = ac,
						.argv = av };
	}
	rc = zn_bundle_main(nfs, (unsigned int)n);
	/* the modules stay loaded: their code may still be on the stack of
	 * the EAL's threads; the process ends now */
	for (int k = 0; k < n; k++)
		free(nfs[k].argv);
	return rc;
}
