// Command zeronf-node is ZeroNF's node agent beside a node's manager (the
// DaemonSet's second container, docs/kubernetes.md):
//
//	zeronf-node device-plugin [flags]   the NF slots as kubelet resources
//	zeronf-node ready                   exit 0 if kubelet has the slots of
//	                                    a ready manager (readiness probe)
//	zeronf-node call METHOD [PARAMS]    one control request to the manager,
//	                                    its result printed as JSON
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"zeronf.dev/k8s/deviceplugin"
	"zeronf.dev/k8s/internal/ctl"
	"zeronf.dev/k8s/internal/instance"
)

// readyFile: in the agent's own filesystem (its container's)
const readyFile = "/tmp/zeronf-node.ready"

type groupFlags []string

func (g *groupFlags) String() string     { return strings.Join(*g, " ") }
func (g *groupFlags) Set(v string) error { *g = append(*g, v); return nil }

func instanceFlags(fs *flag.FlagSet) *instance.Instance {
	in := &instance.Instance{}
	fs.StringVar(&in.Name, "instance", os.Getenv("ZERONF_INSTANCE"), "the manager's instance name")
	fs.StringVar(&in.RunBase, "run-base", "/var/run", "where DPDK's runtime directories are (BASE/dpdk/INSTANCE)")
	fs.StringVar(&in.HugeDir, "huge-dir", "/mnt/huge", "the manager's hugetlbfs directory")
	return in
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmsgprefix)
	log.SetPrefix("zeronf-node: ")
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: zeronf-node device-plugin|call [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "device-plugin":
		os.Exit(devicePlugin(os.Args[2:]))
	case "call":
		os.Exit(call(os.Args[2:]))
	case "ready":
		if _, err := os.Stat(readyFile); err != nil {
			fmt.Fprintln(os.Stderr, "zeronf-node: not ready")
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "zeronf-node: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

func devicePlugin(args []string) int {
	fs := flag.NewFlagSet("device-plugin", flag.ExitOnError)
	in := instanceFlags(fs)
	nfSlots := fs.String("nf-slots", "0-63", "slots advertised as zeronf.dev/nf (NFs of the shared pool)")
	var groups groupFlags
	fs.Var(&groups, "group", "NAME=SLOTS: slots advertised as zeronf.dev/group-NAME (repeat)")
	kdir := fs.String("kubelet-dir", "/var/lib/kubelet/device-plugins", "kubelet's device plugin directory")
	_ = fs.Parse(args)
	if in.Name == "" {
		log.Print("no -instance (or ZERONF_INSTANCE)")
		return 2
	}
	var rs []deviceplugin.Resource
	if *nfSlots != "" {
		s, err := deviceplugin.ParseSlots(*nfSlots)
		if err != nil {
			log.Print(err)
			return 2
		}
		rs = append(rs, deviceplugin.Resource{Name: "nf", Slots: s})
	}
	for _, g := range groups {
		name, slots, ok := strings.Cut(g, "=")
		if !ok || name == "" {
			log.Printf("-group %q: NAME=SLOTS", g)
			return 2
		}
		s, err := deviceplugin.ParseSlots(slots)
		if err != nil {
			log.Print(err)
			return 2
		}
		rs = append(rs, deviceplugin.Resource{Name: "group-" + name, Group: name, Slots: s})
	}
	if err := deviceplugin.Validate(rs); err != nil {
		log.Print(err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := deviceplugin.Run(ctx, deviceplugin.Config{Inst: *in, Resources: rs,
		KubeletDir: *kdir, ReadyFile: readyFile}); err != nil {
		log.Print(err)
		return 1
	}
	return 0
}

func call(args []string) int {
	fs := flag.NewFlagSet("call", flag.ExitOnError)
	in := instanceFlags(fs)
	_ = fs.Parse(args)
	if fs.NArg() < 1 || in.Name == "" {
		fmt.Fprintln(os.Stderr, "usage: zeronf-node call [-instance NAME] METHOD [JSON-PARAMS]")
		return 2
	}
	var params any
	if fs.NArg() > 1 {
		if err := json.Unmarshal([]byte(fs.Arg(1)), &params); err != nil {
			fmt.Fprintf(os.Stderr, "zeronf-node call: params: %v\n", err)
			return 2
		}
	}
	c, err := ctl.Dial(in.Path(instance.CtlSock), 5*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "zeronf-node call: %v\n", err)
		return 1
	}
	defer c.Close()
	var out json.RawMessage
	if err := c.Call(fs.Arg(0), params, &out); err != nil {
		fmt.Fprintf(os.Stderr, "zeronf-node call: %v\n", err)
		return 1
	}
	fmt.Println(string(out))
	return 0
}
