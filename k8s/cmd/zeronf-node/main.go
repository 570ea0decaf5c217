// Command zeronf-node is ZeroNF's node agent beside a node's manager (the
// DaemonSet's second container, docs/kubernetes.md):
//
//	zeronf-node agent [flags]           the node agent: the device plugin,
//	                                    and the node's chains kept in step
//	                                    with the cluster (k8s/nodeagent)
//	zeronf-node device-plugin [flags]   the NF slots as kubelet resources
//	zeronf-node ready                   exit 0 if kubelet has the slots of
//	                                    a ready manager (readiness probe)
//	zeronf-node call METHOD [PARAMS]    one control request to the manager,
//	                                    its result printed as JSON
//	zeronf-node pool [flags]            make the node's pool of veth pairs
//	                                    for the CNI plugin and install the
//	                                    plugin (an init container)
//	zeronf-node attachments             which pods have which pairs (the
//	                                    plugin's records), as JSON
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
	"zeronf.dev/k8s/cni"
	"zeronf.dev/k8s/deviceplugin"
	"zeronf.dev/k8s/internal/ctl"
	"zeronf.dev/k8s/internal/instance"
	"zeronf.dev/k8s/nodeagent"
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
		fmt.Fprintln(os.Stderr, "usage: zeronf-node device-plugin|ready|call|pool|attachments [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "device-plugin":
		os.Exit(devicePlugin(os.Args[2:], false))
	case "agent":
		os.Exit(devicePlugin(os.Args[2:], true))
	case "call":
		os.Exit(call(os.Args[2:]))
	case "pool":
		os.Exit(pool(os.Args[2:]))
	case "attachments":
		fs := flag.NewFlagSet("attachments", flag.ExitOnError)
		dir := fs.String("cni-state-dir", cni.DefaultStateDir, "the CNI plugin's state directory")
		_ = fs.Parse(os.Args[2:])
		as, err := cni.Attachments(*dir)
		if err != nil {
			log.Print(err)
			os.Exit(1)
		}
		if as == nil {
			as = []cni.Attachment{}
		}
		b, _ := json.Marshal(as)
		fmt.Println(string(b))
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

// devicePlugin runs the device plugin, and with reconcile the node's
// reconciler beside it (in the pod: its service account).
func devicePlugin(args []string, reconcile bool) int {
	fs := flag.NewFlagSet("device-plugin", flag.ExitOnError)
	node := fs.String("node", os.Getenv("NODE_NAME"), "agent: the node's name (its ZeroNFNode)")
	metrics := fs.String("metrics-address", "", "agent: serve the manager's Prometheus metrics here (HOST:PORT; empty: not)")
	in := instanceFlags(fs)
	nfSlots := fs.String("nf-slots", "0-63", "slots advertised as zeronf.dev/nf (NFs of the shared pool)")
	var groups groupFlags
	fs.Var(&groups, "group", "NAME=SLOTS: slots advertised as zeronf.dev/group-NAME (repeat)")
	var txqs groupFlags
	fs.Var(&txqs, "tx-queues", "NAME=PORT:N: port PORT's N TX queues for NFs as zeronf.dev/txq-NAME (repeat)")
	kdir := fs.String("kubelet-dir", "/var/lib/kubelet/device-plugins", "kubelet's device plugin directory")
	poolPrefix := fs.String("pool", "", "the CNI pool's prefix: its free pairs are removed at exit (zeronf-node pool made them)")
	stateDir := fs.String("cni-state-dir", cni.DefaultStateDir, "the CNI plugin's state directory")
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
	for _, q := range txqs {
		name, rest, ok1 := strings.Cut(q, "=")
		port, n, ok2 := strings.Cut(rest, ":")
		pi, err1 := strconv.Atoi(port)
		ni, err2 := strconv.Atoi(n)
		if !ok1 || !ok2 || name == "" || err1 != nil || err2 != nil || pi < 0 || ni < 1 {
			log.Printf("-tx-queues %q: NAME=PORT:N", q)
			return 2
		}
		rs = append(rs, deviceplugin.TxQueueResource(name, pi, ni))
	}
	if err := deviceplugin.Validate(rs); err != nil {
		log.Print(err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	recErr := make(chan error, 1)
	if reconcile {
		if *node == "" {
			log.Print("agent: no -node (or NODE_NAME)")
			return 2
		}
		go func() {
			recErr <- runAgent(ctx, &nodeagent.Agent{Node: *node, Inst: *in, CNIState: *stateDir})
			stop() // the plugin goes with it: kubelet restarts the container
		}()
		if *metrics != "" {
			go func() {
				if err := nodeagent.ServeMetrics(ctx, *metrics, &nodeagent.Metrics{Inst: *in}); err != nil {
					log.Printf("metrics on %s: %v", *metrics, err)
					stop()
				}
			}()
		}
	}
	err := deviceplugin.Run(ctx, deviceplugin.Config{Inst: *in, Resources: rs,
		KubeletDir: *kdir, ReadyFile: readyFile})
	stop()
	if reconcile {
		if rerr := <-recErr; rerr != nil && err == nil {
			err = rerr
		}
	}
	if *poolPrefix != "" {
		// the agent leaves: its pool's free pairs go now, those in pods
		// at their DEL (the plugin finds the pool gone)
		n, perr := cni.RemovePool(*poolPrefix, *stateDir)
		if perr != nil {
			log.Printf("pool %s: %v", *poolPrefix, perr)
		}
		log.Printf("pool %s removed (%d pairs still in pods)", *poolPrefix, n)
	}
	if err != nil {
		log.Print(err)
		return 1
	}
	return 0
}

// pool makes the node's veth pairs (cni.EnsurePool) and installs the
// plugin: what the manager's af_packet ports and the runtime need before
// the manager starts.
func pool(args []string) int {
	fs := flag.NewFlagSet("pool", flag.ExitOnError)
	prefix := fs.String("prefix", cni.DefaultPrefix, "the pairs' names: PREFIXi (the manager's end), PREFIXi-pod")
	n := fs.Int("count", 4, "pairs")
	mtu := fs.Int("mtu", 1500, "the pairs' MTU")
	stateDir := fs.String("cni-state-dir", cni.DefaultStateDir, "the CNI plugin's state directory")
	binDir := fs.String("cni-bin-dir", "", "install the plugin here as 'zeronf' (the node's CNI directory, mounted)")
	plugin := fs.String("plugin", "/usr/local/bin/zeronf-cni", "the plugin to install")
	var owner groupFlags
	fs.Var(&owner, "owner", "PORT=NAMESPACE: pair PORT (the manager's end) for that namespace's pods only (repeated)")
	_ = fs.Parse(args)
	owners := map[string]string{}
	for _, o := range owner {
		port, ns, ok := strings.Cut(o, "=")
		if !ok || port == "" || ns == "" {
			log.Printf("-owner %q: PORT=NAMESPACE", o)
			return 2
		}
		owners[port] = ns
	}
	if err := cni.EnsurePool(*prefix, *n, *mtu, *stateDir, owners); err != nil {
		log.Print(err)
		return 1
	}
	if *binDir != "" {
		if err := install(*plugin, filepath.Join(*binDir, "zeronf")); err != nil {
			log.Print(err)
			return 1
		}
	}
	log.Printf("pool %s: %d pairs", *prefix, *n)
	return 0
}

// install copies src to dst atomically (a runtime may be running the old
// one).
func install(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".new"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
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

// runAgent runs the node's reconciler until ctx ends. Its cache holds
// the NF pods only (their label), not every pod of the cluster.
func runAgent(ctx context.Context, a *nodeagent.Agent) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := zv1.AddToScheme(scheme); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New())
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	sel, err := labels.Parse(nodeagent.LabelNF)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Label: sel}}},
	})
	if err != nil {
		return err
	}
	a.Client = mgr.GetClient()
	if err := a.SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
