package deviceplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"zeronf.dev/k8s/internal/instance"
)

// fakeManager lays out an instance's files as a running manager does
// (lib/common/zn_instance.c): its lock held and saying ready, two
// hugepage files (and another instance's), one trust group. The locks are
// real flocks held by this process (on descriptors of their own, as a
// manager's and an NF's are).
type fakeManager struct {
	inst  instance.Instance
	locks []*os.File
}

func newFakeManager(t *testing.T) *fakeManager {
	t.Helper()
	base := t.TempDir()
	in := instance.Instance{Name: "node-a", RunBase: base, HugeDir: filepath.Join(base, "huge")}
	for _, d := range []string{in.RunDir(), in.HugeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	m := &fakeManager{inst: in}
	t.Cleanup(func() {
		for _, f := range m.locks {
			f.Close()
		}
	})
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(in.Path(instance.LockFile), "4242 1000 1\n")
	m.hold(in.Path(instance.LockFile))
	for _, f := range []string{"node-amap_0", "node-amap_1", "node-bmap_0", "node-atg_0"} {
		write(filepath.Join(in.HugeDir, f), "")
	}
	for _, f := range []string{instance.CtlSock, instance.KickSock, "zeronf-kick-tg0.sock", "config"} {
		write(in.Path(f), "")
	}
	write(in.Path(instance.GroupsFile), "0 red "+filepath.Join(in.HugeDir, "node-atg_0")+"\n")
	return m
}

// hold takes path's lock exclusively, as its owner does.
func (m *fakeManager) hold(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		panic(err)
	}
	m.locks = append(m.locks, f)
}

func testPlugin(m *fakeManager, r Resource) *plugin {
	cfg := &Config{Inst: m.inst, Resources: []Resource{r}, KubeletDir: m.inst.RunBase}
	return newPlugin(cfg, r)
}

func mounts(r *pluginapi.ContainerAllocateResponse) map[string]string {
	out := map[string]string{}
	for _, mt := range r.Mounts {
		ro := ""
		if mt.ReadOnly {
			ro = " ro"
		}
		out[mt.ContainerPath] = mt.HostPath + ro
	}
	return out
}

func TestParseSlots(t *testing.T) {
	got, err := ParseSlots("0-2, 5,7-7")
	if err != nil || fmt.Sprint(got) != "[0 1 2 5 7]" {
		t.Fatalf("got %v %v", got, err)
	}
	for _, bad := range []string{"", "x", "3-1", "0-96", "-1", "1,1", "2-4,3"} {
		if _, err := ParseSlots(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestValidateRefusesSharedSlots(t *testing.T) {
	err := Validate([]Resource{{Name: "nf", Slots: []int{1, 2}}, {Name: "group-red", Slots: []int{2, 3}}})
	if err == nil || !strings.Contains(err.Error(), "slot 2 is both") {
		t.Fatalf("got %v", err)
	}
	if err := Validate([]Resource{{Name: "nf"}, {Name: "nf"}}); err == nil {
		t.Fatal("a resource twice: no error")
	}
}

func TestAllocateSharedPool(t *testing.T) {
	m := newFakeManager(t)
	p := testPlugin(m, Resource{Name: "nf", Slots: []int{0, 1, 2}})
	resp, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"slot-1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.ContainerResponses[0]
	if r.Envs["ZERONF_INSTANCE"] != "node-a" || r.Envs["ZERONF_SLOT"] != "1" ||
		r.Envs["ZERONF_GROUP"] != "" {
		t.Fatalf("envs %v", r.Envs)
	}
	in := m.inst
	want := map[string]string{
		in.RunDir():                              in.RunDir(),
		in.Path(instance.CtlSock):                "/dev/null ro", // masked
		filepath.Join(in.HugeDir, "node-amap_0"): filepath.Join(in.HugeDir, "node-amap_0"),
		filepath.Join(in.HugeDir, "node-amap_1"): filepath.Join(in.HugeDir, "node-amap_1"),
	}
	if got := mounts(r); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("mounts\n got %v\nwant %v", got, want)
	}
}

func TestAllocateTrustGroupGetsItsFilesOnly(t *testing.T) {
	m := newFakeManager(t)
	p := testPlugin(m, Resource{Name: "group-red", Group: "red", Slots: []int{64, 65}})
	resp, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"slot-65"}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.ContainerResponses[0]
	if r.Envs["ZERONF_GROUP"] != "red" || r.Envs["ZERONF_SLOT"] != "65" {
		t.Fatalf("envs %v", r.Envs)
	}
	in := m.inst
	got := mounts(r)
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{
		filepath.Join(in.HugeDir, "node-atg_0"),
		in.Path("zeronf-groups"), in.Path("zeronf-kick-tg0.sock"),
		in.Path("zeronf-nf65.lock"), in.Path("zeronf.lock"),
	}
	sort.Strings(want)
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("mounts %v, want %v", keys, want)
	}
	if !strings.HasSuffix(got[in.Path("zeronf.lock")], " ro") {
		t.Fatal("the instance lock is not read-only")
	}
	// its slot's lock file was made, a file (a runtime would have made
	// a directory of a missing one)
	if st, err := os.Stat(in.Path("zeronf-nf65.lock")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("slot lock: %v %v", st, err)
	}
}

func TestAllocateRefuses(t *testing.T) {
	m := newFakeManager(t)
	p := testPlugin(m, Resource{Name: "group-blue", Group: "blue", Slots: []int{70}})
	req := func(ids ...string) error {
		_, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{
			ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
		return err
	}
	if err := req("slot-70"); err == nil || !strings.Contains(err.Error(), `no trust group "blue"`) {
		t.Errorf("no such group: %v", err)
	}
	if err := req("slot-70", "slot-71"); err == nil || !strings.Contains(err.Error(), "one per container") {
		t.Errorf("two slots: %v", err)
	}
	if err := req("gpu-0"); err == nil {
		t.Error("a device not ours: no error")
	}
	m.locks[0].Close() // the manager gone
	m.locks = m.locks[1:]
	if err := req("slot-70"); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("manager gone: %v", err)
	}
}

func TestHealth(t *testing.T) {
	m := newFakeManager(t)
	p := testPlugin(m, Resource{Name: "nf", Slots: []int{0, 1, 2}})
	health := func() string {
		p.health()
		var s []string
		for _, d := range p.devices {
			s = append(s, d.ID+"="+d.Health)
		}
		return strings.Join(s, " ")
	}
	if h := health(); h != "slot-0=Healthy slot-1=Healthy slot-2=Healthy" {
		t.Fatal(h)
	}
	// slot 1 taken by an NF kubelet did not place: not kubelet's to give
	m.hold(m.inst.SlotLock(1))
	if h := health(); h != "slot-0=Healthy slot-1=Unhealthy slot-2=Healthy" {
		t.Fatal(h)
	}
	// slot 2 taken by a pod kubelet gave it to (its checkpoint says)
	m.hold(m.inst.SlotLock(2))
	cp := `{"Data":{"PodDeviceEntries":[{"PodUID":"u","ContainerName":"nf",` +
		`"ResourceName":"zeronf.dev/nf","DeviceIDs":{"-1":["slot-2"]}}]}}`
	if err := os.WriteFile(filepath.Join(m.inst.RunBase, "kubelet_internal_checkpoint"), []byte(cp), 0o600); err != nil {
		t.Fatal(err)
	}
	if h := health(); h != "slot-0=Healthy slot-1=Unhealthy slot-2=Healthy" {
		t.Fatal(h)
	}
	// the manager gone: nothing to give
	m.locks[0].Close()
	if h := health(); h != "slot-0=Unhealthy slot-1=Unhealthy slot-2=Unhealthy" {
		t.Fatal(h)
	}
}

func TestPreferredAllocationTakesLowestFree(t *testing.T) {
	p := &plugin{}
	resp, err := p.GetPreferredAllocation(context.Background(), &pluginapi.PreferredAllocationRequest{
		ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs:   []string{"slot-9", "slot-3", "slot-10", "slot-4"},
			MustIncludeDeviceIDs: []string{"slot-10"}, AllocationSize: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.ContainerResponses[0].DeviceIDs; fmt.Sprint(got) != "[slot-10 slot-3]" {
		t.Fatalf("got %v", got)
	}
}

// serveCtl answers port.list on the fake manager's control socket: port 1
// has queues for NFs.
func serveCtl(t *testing.T, m *fakeManager, queues int) {
	t.Helper()
	path := m.inst.Path(instance.CtlSock)
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req struct {
					ID     int    `json:"id"`
					Method string `json:"method"`
				}
				if json.NewDecoder(c).Decode(&req) != nil || req.Method != "port.list" {
					return
				}
				fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%d,"result":{"ports":[`+
					`{"port":0,"nf_tx":{"queues":0}},{"port":1,"nf_tx":{"queues":%d}}]}}`+"\n",
					req.ID, queues)
			}()
		}
	}()
}

// A port's TX queues for NFs: as many devices as asked, those past the
// manager's queues for the port Unhealthy; a container of one is told to
// ask the manager for a queue of that port, and given nothing else.
func TestTxQueues(t *testing.T) {
	m := newFakeManager(t)
	serveCtl(t, m, 2)
	p := testPlugin(m, TxQueueResource("sink", 1, 3))
	p.health()
	var got []string
	for _, d := range p.devices {
		got = append(got, d.ID+"="+d.Health)
	}
	if s := strings.Join(got, " "); s != "txq-0=Healthy txq-1=Healthy txq-2=Unhealthy" {
		t.Fatal(s)
	}
	r, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"txq-1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.ContainerResponses[0]
	if fmt.Sprint(c.Envs) != "map[ZERONF_TX_PORT_1:1]" || len(c.Mounts) != 0 || len(c.Devices) != 0 {
		t.Fatalf("%+v", c)
	}
	if _, err := p.Allocate(context.Background(), &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"txq-0", "txq-1"}}}}); err == nil {
		t.Fatal("two queues of one port for one container")
	}
	// the manager gone: none
	m.locks[0].Close()
	p.health()
	for _, d := range p.devices {
		if d.Health != pluginapi.Unhealthy {
			t.Fatalf("%s %s with no manager", d.ID, d.Health)
		}
	}
}
