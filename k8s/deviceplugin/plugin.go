// Package deviceplugin is ZeroNF's Kubernetes device plugin (kubelet's
// deviceplugin v1beta1 API): the NF slots of a node's manager as resources,
// so that an NF pod asks for `zeronf.dev/nf: 1` (or a trust group's
// `zeronf.dev/group-NAME: 1`) and gets, from Allocate, exactly the files
// its NF opens and the environment libzeronf reads: no hostPath, no
// privilege in its spec (docs/kubernetes.md).
//
// Devices are the manager's NF slots (lib/shm/zn_shm.h ZN_MAX_NFS), split
// between the resources by configuration (a slot is one resource's only:
// kubelet never gives one slot twice). A device's ID is "slot-N"; the NF is
// told N (ZERONF_SLOT) and has that slot's lock file alone, so it can
// neither take nor block another slot.
//
// What a container gets (paths as on the node; the plugin's own pod
// mounts them at the same paths):
//   - an NF of the shared pool (a DPDK secondary): the runtime directory
//     (its EAL works there), with the control and telemetry sockets masked
//     by /dev/null, and the instance's hugepage files, as a sandbox of no
//     group has them (mgr/nf/sandbox.c);
//   - an NF of trust group G (no secondary: its EAL is its own): the
//     instance lock and the groups' list, read-only, G's kick socket, its
//     slot's lock file and G's file, nothing else of the manager's.
//
// Health: a slot is Healthy while the manager is ready and the slot is
// free or kubelet's (its checkpoint, or an Allocate here); a slot an NF
// took outside Kubernetes (the manager's own launcher) is Unhealthy, so
// kubelet does not give it.
//
// A port's TX queues for NFs (NF -> port hand-off, mgr/port/port_nftx.c)
// are a resource too, zeronf.dev/txq-PORTNAME, its devices "txq-K": the
// manager (--nf-tx-queues-by-request) gives a queue only to an NF that
// asks, and the container of such a device is told to ask
// (ZERONF_TX_PORT_P=1). Devices past the queues the manager has for that
// port (its port.list) are Unhealthy.
package deviceplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"zeronf.dev/k8s/internal/ctl"
	"zeronf.dev/k8s/internal/instance"
)

// ResourcePrefix names ZeroNF's resources.
const ResourcePrefix = "zeronf.dev/"

// Resource is one advertised resource: the slots it owns and, for a trust
// group's, the group; or a port's TX queues for NFs (Queues > 0).
type Resource struct {
	Name  string // e.g. "nf", "group-red", "txq-wan": zeronf.dev/NAME
	Group string // "" for the shared pool
	Slots []int
	// Port and Queues: port Port's queues for NFs, Queues of them.
	Port   int
	Queues int
}

// TxQueueResource: port name's (id port) n queues for NFs.
func TxQueueResource(name string, port, n int) Resource {
	return Resource{Name: "txq-" + name, Port: port, Queues: n}
}

// Config is the plugin's: the instance and its resources.
type Config struct {
	Inst        instance.Instance
	Resources   []Resource
	KubeletDir  string        // pluginapi.DevicePluginPath
	HealthEvery time.Duration // how often health is looked at
	// ReadyFile exists while kubelet has every resource's slots of a
	// ready manager (the agent's readiness probe: zeronf-node ready)
	ReadyFile string
}

// ParseSlots reads "A-B,C" into slot numbers, each < instance.MaxNFs.
func ParseSlots(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, found := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("slots %q: %q is not a number", s, lo)
		}
		b := a
		if found {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("slots %q: %q is not a number", s, hi)
			}
		}
		if a < 0 || b >= instance.MaxNFs || a > b {
			return nil, fmt.Errorf("slots %q: %d-%d is not within 0-%d",
				s, a, b, instance.MaxNFs-1)
		}
		for n := a; n <= b; n++ {
			if seen[n] {
				return nil, fmt.Errorf("slots %q: slot %d twice", s, n)
			}
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// Validate refuses resources sharing a slot or named twice.
func Validate(rs []Resource) error {
	owner := map[int]string{}
	names := map[string]bool{}
	for _, r := range rs {
		if names[r.Name] {
			return fmt.Errorf("resource %s%s twice", ResourcePrefix, r.Name)
		}
		names[r.Name] = true
		for _, s := range r.Slots {
			if o, ok := owner[s]; ok {
				return fmt.Errorf("slot %d is both %s%s's and %s%s's",
					s, ResourcePrefix, o, ResourcePrefix, r.Name)
			}
			owner[s] = r.Name
		}
	}
	return nil
}

func slotID(s int) string { return fmt.Sprintf("slot-%d", s) }

func slotOf(id string) (int, error) {
	rest, ok := strings.CutPrefix(id, "slot-")
	if !ok {
		return 0, fmt.Errorf("no device %q", id)
	}
	return strconv.Atoi(rest)
}

func queueID(k int) string { return fmt.Sprintf("txq-%d", k) }

// devNum: a device's number (a slot's, a queue's), for ordering.
func devNum(id string) int {
	_, n, _ := strings.Cut(id, "-")
	k, _ := strconv.Atoi(n)
	return k
}

// portQueues: the queues for NFs the manager has on port (port.list's
// nf_tx.queues); -1 if it cannot say.
func portQueues(in instance.Instance, port int) int {
	c, err := ctl.Dial(in.Path(instance.CtlSock), time.Second)
	if err != nil {
		return -1
	}
	defer c.Close()
	var pl struct {
		Ports []struct {
			Port int `json:"port"`
			NfTx struct {
				Queues int `json:"queues"`
			} `json:"nf_tx"`
		} `json:"ports"`
	}
	if err := c.Call("port.list", nil, &pl); err != nil {
		return -1
	}
	for _, p := range pl.Ports {
		if p.Port == port {
			return p.NfTx.Queues
		}
	}
	return 0
}

// plugin serves one resource.
type plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	cfg    *Config
	res    Resource
	sock   string
	server *grpc.Server

	mu      sync.Mutex
	given   map[int]bool // slots Allocate gave (since this plugin began)
	devices []*pluginapi.Device
	gen     uint64 // of devices, one more at each change
	ready   bool   // the manager was ready in what devices says
	sentGen uint64 // the last devices kubelet has
	changed chan struct{}
}

func newPlugin(cfg *Config, r Resource) *plugin {
	name := strings.ReplaceAll(r.Name, "/", "_")
	return &plugin{cfg: cfg, res: r,
		sock:    filepath.Join(cfg.KubeletDir, "zeronf-"+name+".sock"),
		given:   map[int]bool{},
		changed: make(chan struct{}, 1)}
}

// kubeletGiven are the slots of resource name that kubelet's checkpoint
// says it gave to containers (it keeps them across its restarts and
// ours): an NF holding one of those is Kubernetes'.
func kubeletGiven(dir, name string) map[int]bool {
	b, err := os.ReadFile(filepath.Join(dir, "kubelet_internal_checkpoint"))
	out := map[int]bool{}
	if err != nil {
		return out
	}
	var cp struct {
		Data struct {
			PodDeviceEntries []struct {
				ResourceName string
				DeviceIDs    map[string][]string
			}
		}
	}
	if json.Unmarshal(b, &cp) != nil {
		return out
	}
	for _, e := range cp.Data.PodDeviceEntries {
		if e.ResourceName != name {
			continue
		}
		for _, ids := range e.DeviceIDs {
			for _, id := range ids {
				if s, err := slotOf(id); err == nil {
					out[s] = true
				}
			}
		}
	}
	return out
}

// health computes the devices as they are now; true if they changed.
func (p *plugin) health() bool {
	ready := p.cfg.Inst.Ready()
	var devs []*pluginapi.Device
	if p.res.Queues > 0 {
		has := -1
		if ready {
			has = portQueues(p.cfg.Inst, p.res.Port)
		}
		for k := 0; k < p.res.Queues; k++ {
			h := pluginapi.Healthy
			if k >= has {
				h = pluginapi.Unhealthy
			}
			devs = append(devs, &pluginapi.Device{ID: queueID(k), Health: h})
		}
	}
	kube := kubeletGiven(p.cfg.KubeletDir, ResourcePrefix+p.res.Name)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.res.Slots {
		h := pluginapi.Healthy
		if !ready || (p.cfg.Inst.SlotHeld(s) && !p.given[s] && !kube[s]) {
			h = pluginapi.Unhealthy
		}
		devs = append(devs, &pluginapi.Device{ID: slotID(s), Health: h})
	}
	same := len(devs) == len(p.devices)
	for i := 0; same && i < len(devs); i++ {
		same = devs[i].Health == p.devices[i].Health
	}
	if !same || ready != p.ready || p.gen == 0 {
		p.gen++
	}
	p.devices = devs
	p.ready = ready
	return !same
}

// reported says whether kubelet has been told the slots of a ready
// manager.
func (p *plugin) reported() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready && p.sentGen == p.gen
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		p.mu.Lock()
		devs, gen := p.devices, p.gen
		p.mu.Unlock()
		if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
			return err
		}
		p.mu.Lock()
		p.sentGen = gen
		p.mu.Unlock()
		select {
		case <-p.changed:
		case <-s.Context().Done():
			return nil
		}
	}
}

// GetPreferredAllocation prefers the lowest free slots: an NF's slot fixes
// its lcore id (lib/nf/nf.c), and low ones keep the manager's tables short.
func (p *plugin) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	out := &pluginapi.PreferredAllocationResponse{}
	for _, c := range req.ContainerRequests {
		must := append([]string(nil), c.MustIncludeDeviceIDs...)
		inc := map[string]bool{}
		for _, id := range must {
			inc[id] = true
		}
		avail := append([]string(nil), c.AvailableDeviceIDs...)
		sort.Slice(avail, func(a, b int) bool { return devNum(avail[a]) < devNum(avail[b]) })
		for _, id := range avail {
			if len(must) >= int(c.AllocationSize) {
				break
			}
			if !inc[id] {
				must = append(must, id)
			}
		}
		out.ContainerResponses = append(out.ContainerResponses,
			&pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: must})
	}
	return out, nil
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	out := &pluginapi.AllocateResponse{}
	if p.res.Queues > 0 {
		// a queue of the port: the NF asks the manager for one
		for _, c := range req.ContainerRequests {
			if len(c.DevicesIds) != 1 {
				return nil, fmt.Errorf("%s%s: one per container (an NF has one queue a port), not %d",
					ResourcePrefix, p.res.Name, len(c.DevicesIds))
			}
			out.ContainerResponses = append(out.ContainerResponses, &pluginapi.ContainerAllocateResponse{
				Envs: map[string]string{fmt.Sprintf("ZERONF_TX_PORT_%d", p.res.Port): "1"}})
		}
		return out, nil
	}
	for _, c := range req.ContainerRequests {
		if len(c.DevicesIds) != 1 {
			return nil, fmt.Errorf("%s%s: one per container (an NF has one slot), not %d",
				ResourcePrefix, p.res.Name, len(c.DevicesIds))
		}
		s, err := slotOf(c.DevicesIds[0])
		if err != nil {
			return nil, err
		}
		r, err := p.allocate(s)
		if err != nil {
			log.Printf("allocate %s%s %s: %v", ResourcePrefix, p.res.Name, c.DevicesIds[0], err)
			return nil, err
		}
		p.mu.Lock()
		p.given[s] = true
		p.mu.Unlock()
		out.ContainerResponses = append(out.ContainerResponses, r)
	}
	return out, nil
}

// allocate is what one container with slot s gets.
func (p *plugin) allocate(s int) (*pluginapi.ContainerAllocateResponse, error) {
	in := p.cfg.Inst
	if !in.Ready() {
		return nil, fmt.Errorf("manager %q is not running", in.Name)
	}
	r := &pluginapi.ContainerAllocateResponse{
		Envs: map[string]string{
			"ZERONF_INSTANCE": in.Name,
			"ZERONF_SLOT":     strconv.Itoa(s),
			// libzeronf and DPDK find the runtime directory under it
			// whatever the container's user
			"XDG_RUNTIME_DIR": in.RunBase,
		},
	}
	bind := func(path string, ro bool) {
		r.Mounts = append(r.Mounts, &pluginapi.Mount{ContainerPath: path, HostPath: path, ReadOnly: ro})
	}
	if p.res.Group == "" {
		bind(in.RunDir(), false)
		for _, f := range []string{instance.CtlSock, "dpdk_telemetry.v2"} {
			if _, err := os.Stat(in.Path(f)); err == nil {
				r.Mounts = append(r.Mounts, &pluginapi.Mount{
					ContainerPath: in.Path(f), HostPath: "/dev/null", ReadOnly: true})
			}
		}
		files, err := in.HugeFiles()
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("manager %q has no hugepage files in %s", in.Name, in.HugeDir)
		}
		for _, f := range files {
			bind(f, false)
		}
		return r, nil
	}
	groups, err := in.Groups()
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if g.Name != p.res.Group {
			continue
		}
		r.Envs["ZERONF_GROUP"] = g.Name
		// its slot's lock file, made if no NF had that slot yet (a
		// bind mount of a path that is not there would be made a
		// directory by the runtime)
		if err := in.EnsureSlotLock(s); err != nil {
			return nil, err
		}
		bind(in.Path(instance.LockFile), true)
		bind(in.Path(instance.GroupsFile), true)
		bind(in.Path(fmt.Sprintf(instance.GroupKickFmt, g.Index)), false)
		bind(in.SlotLock(s), false)
		bind(g.File, false)
		return r, nil
	}
	return nil, fmt.Errorf("manager %q has no trust group %q", in.Name, p.res.Group)
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// serve starts the gRPC server on the plugin's socket and registers it
// with kubelet.
func (p *plugin) serve() error {
	_ = os.Remove(p.sock)
	l, err := net.Listen("unix", p.sock)
	if err != nil {
		return err
	}
	p.server = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(p.server, p)
	go func() { _ = p.server.Serve(l) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+filepath.Join(p.cfg.KubeletDir, "kubelet.sock"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		p.server.Stop()
		return err
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     filepath.Base(p.sock),
		ResourceName: ResourcePrefix + p.res.Name,
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	})
	if err != nil {
		p.server.Stop()
		return fmt.Errorf("register %s%s with kubelet: %w", ResourcePrefix, p.res.Name, err)
	}
	log.Printf("%s%s: %d slots, %d queues, registered with kubelet", ResourcePrefix, p.res.Name,
		len(p.res.Slots), p.res.Queues)
	return nil
}

func (p *plugin) stop() {
	if p.server != nil {
		p.server.Stop()
		p.server = nil
	}
	_ = os.Remove(p.sock)
}

// Run serves every resource until ctx ends, registering again whenever
// kubelet starts anew (it removes the plugins' sockets then).
func Run(ctx context.Context, cfg Config) error {
	if err := Validate(cfg.Resources); err != nil {
		return err
	}
	if cfg.KubeletDir == "" {
		cfg.KubeletDir = pluginapi.DevicePluginPath
	}
	if cfg.HealthEvery == 0 {
		cfg.HealthEvery = 2 * time.Second
	}
	ps := make([]*plugin, 0, len(cfg.Resources))
	for _, r := range cfg.Resources {
		ps = append(ps, newPlugin(&cfg, r))
	}
	defer func() {
		for _, p := range ps {
			p.stop()
		}
	}()
	t := time.NewTicker(cfg.HealthEvery)
	defer t.Stop()
	for {
		all := true
		for _, p := range ps {
			if p.health() {
				select {
				case p.changed <- struct{}{}:
				default:
				}
			}
			if _, err := os.Stat(p.sock); p.server == nil || errors.Is(err, os.ErrNotExist) {
				p.stop()
				if err := p.serve(); err != nil {
					log.Printf("%v (again in %v)", err, cfg.HealthEvery)
				}
			}
			all = all && p.server != nil && p.reported()
		}
		if cfg.ReadyFile != "" {
			if all {
				_ = os.WriteFile(cfg.ReadyFile, nil, 0o644)
			} else {
				_ = os.Remove(cfg.ReadyFile)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
