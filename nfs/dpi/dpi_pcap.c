/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * zeronf-dpi-pcap: the DPI classifier of the dpi NF, fed by libpcap from a
 * capture file or a live interface instead of ZeroNF (the libpcap side of
 * the DPDK-vs-libpcap comparison). Packet I/O is libpcap only; the EAL is
 * initialised in memory-only mode (no hugepages, no devices) because the
 * flow table is libzeronf's zn_ft on rte_hash.
 *
 *   zeronf-dpi-pcap -i FILE|IFACE [-w REPORT] [-d PROTO_DIR] [-t]
 *                   [-c FLOWS] [-n PACKETS] [-r REPEAT]
 *
 * Prints one JSON line of counters and the classification rate to stdout.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "dpi.h"

static void
usage(FILE *o)
{
	fprintf(o, "usage: zeronf-dpi-pcap -i FILE|IFACE [-w REPORT] "
		"[-d PROTO_DIR] [-t] [-c FLOWS] [-n PACKETS] [-r REPEAT]\n"
		"  -i  capture file (pcap/pcapng) or interface\n"
		"  -w  write the flow report (ndpiReader -w format)\n"
		"  -d  directory with protos.txt, categories.txt, ...\n"
		"  -t  decode GTP/TZSP tunnels (ndpiReader -t)\n"
		"  -c  flow table capacity (default 1048576)\n"
		"  -n  stop after N packets (live capture)\n"
		"  -r  file: classify it R times from memory (benchmark;\n"
		"      each pass starts from an empty flow table)\n");
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct frame {
	struct pcap_pkthdr h;
	const u_char *data;
};

int
main(int argc, char **argv)
{
	const char *in = NULL, *report = NULL;
	struct dpi_opts o = { .capacity = 1u << 20, .name = "dpi_pcap" };
	char errbuf[PCAP_ERRBUF_SIZE];
	char prefix[64], rundir[PATH_MAX];
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf",
			"-m", "1024", "--no-telemetry", "--log-level=error",
			prefix, NULL };
	unsigned long limit = 0, repeat = 0;
	struct frame *frames = NULL;
	size_t nframes = 0, cap = 0;
	struct dpi_stats st;
	struct dpi *d = NULL;
	pcap_t *p;
	int c, dlt, rc = 1;
	double t0, t1;
	uint64_t done = 0;

	while ((c = getopt(argc, argv, "i:w:d:tc:n:r:h")) != -1) {
		switch (c) {
		case 'i': in = optarg; break;
		case 'w': report = optarg; break;
		case 'd': o.proto_dir = optarg; break;
		case 't': o.decode_tunnels = true; break;
		case 'c': o.capacity = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': limit = strtoul(optarg, NULL, 0); break;
		case 'r': repeat = strtoul(optarg, NULL, 0); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (in == NULL || o.capacity == 0) {
		usage(stderr);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=zndpipcap%d",
		 (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "zeronf-dpi-pcap: EAL init failed\n");
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	p = access(in, R_OK) == 0 ?
		    pcap_open_offline_with_tstamp_precision(
			    in, PCAP_TSTAMP_PRECISION_MICRO, errbuf) :
		    pcap_open_live(in, 65535, 1, 100, errbuf);
	if (p == NULL) {
		fprintf(stderr, "zeronf-dpi-pcap: %s\n", errbuf);
		goto out;
	}
	dlt = pcap_datalink(p);
	d = dpi_create(&o);
	if (d == NULL)
		goto out;
	if (repeat > 0) {
		/* Benchmark: the file in memory, classified R times. */
		struct pcap_pkthdr *h;
		const u_char *data;

		while (pcap_next_ex(p, &h, &data) == 1) {
			if (nframes == cap) {
				cap = cap ? 2 * cap : 4096;
				frames = realloc(frames, cap * sizeof(*frames));
				if (frames == NULL)
					goto out;
			}
			frames[nframes].h = *h;
			frames[nframes].data = malloc(h->caplen);
			if (frames[nframes].data == NULL)
				goto out;
			memcpy((void *)(uintptr_t)frames[nframes].data, data,
			       h->caplen);
			nframes++;
		}
		t0 = now_s();
		for (unsigned long r = 0; r < repeat; r++) {
			if (r > 0) {
				dpi_free(d);
				d = dpi_create(&o);
				if (d == NULL)
					goto out;
			}
			for (size_t i = 0; i < nframes; i++) {
				struct dpi_verdict v;
				const struct pcap_pkthdr *fh = &frames[i].h;

				dpi_process(d, frames[i].data, fh->caplen, dlt,
					    (uint64_t)fh->ts.tv_sec * 1000 +
						    fh->ts.tv_usec / 1000, &v);
			}
			done += nframes;
		}
		t1 = now_s();
	} else {
		struct pcap_pkthdr *h;
		const u_char *data;
		int r;

		t0 = now_s();
		while ((r = pcap_next_ex(p, &h, &data)) >= 0) {
			struct dpi_verdict v;

			if (r == 0)
				continue; /* live: timeout */
			dpi_process(d, data, h->caplen, dlt,
				    (uint64_t)h->ts.tv_sec * 1000 +
					    h->ts.tv_usec / 1000, &v);
			if (++done == limit)
				break;
		}
		t1 = now_s();
	}
	dpi_finish(d);
	if (report != NULL) {
		FILE *f = fopen(report, "w");

		if (f == NULL || dpi_report(d, f) < 0) {
			fprintf(stderr, "zeronf-dpi-pcap: cannot write %s\n",
				report);
			if (f != NULL)
				fclose(f);
			goto out;
		}
		fclose(f);
	}
	dpi_get_stats(d, &st);
	printf("{\"packets\":%" PRIu64 ",\"flows\":%" PRIu64
	       ",\"classified\":%" PRIu64 ",\"guessed\":%" PRIu64
	       ",\"skipped\":%" PRIu64 ",\"seconds\":%.6f,\"mpps\":%.4f}\n",
	       done, st.flows, st.classified, st.guessed,
	       st.skip[DPI_SKIP_SHORT] + st.skip[DPI_SKIP_NOT_IP] +
		       st.skip[DPI_SKIP_FRAGMENT] +
		       st.skip[DPI_SKIP_TRUNCATED] + st.skip[DPI_SKIP_BAD_L2],
	       t1 - t0, t1 > t0 ? (double)done / (t1 - t0) / 1e6 : 0.0);
	rc = 0;
out:
	dpi_free(d);
	if (p != NULL)
		pcap_close(p);
	for (size_t i = 0; i < nframes; i++)
		free((void *)(uintptr_t)frames[i].data);
	free(frames);
	rte_eal_cleanup();
	rmdir(rundir); /* empty, but the EAL leaves it */
	return rc;
}
