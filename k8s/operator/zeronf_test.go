package operator

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

func zspec() zv1.ZeroNFSpec {
	return zv1.ZeroNFSpec{
		Ports: []zv1.Port{{Name: "in", Device: "net_null0"},
			{Name: "wan", Device: "net_af_packet0,iface=eth1"}},
		AppPorts: 2, AppPortPrefix: "znapp", AppPortMTU: 1500,
		HugepagesMi: 128, PoolSize: 4095, NFSlots: 32, NFTxQueues: 4,
		TrustGroups: []zv1.TrustGroup{{Name: "red", Buffers: 1023, Slots: 8},
			{Name: "blue", Buffers: 511, Slots: 4}},
		DefaultChain: []string{"svc:1", "port:wan"},
		ManagerArgs:  []string{"--stats-interval", "0"},
	}
}

func TestManagerCommand(t *testing.T) {
	z := zspec()
	got := strings.Join(ManagerCommand(&z), " ")
	want := "/usr/local/bin/zeronf-mgr -i $(NODE_NAME) --huge-dir /mnt/huge --mem 128 " +
		"--pool-size 4095 -p net_null0 --port-name 0=in " +
		"-p net_af_packet0,iface=eth1 --port-name 1=wan " +
		"-p net_af_packet_znapp0,iface=znapp0 --port-name 2=znapp0 " +
		"-p net_af_packet_znapp1,iface=znapp1 --port-name 3=znapp1 " +
		"--trust-group red:1023 --trust-group blue:511 " +
		"--nf-tx-queues 4 --nf-tx-queues-by-request -c svc:1,port:1 --stats-interval 0"
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

// Tenants: the manager's --tenant and --slice (ports by id), and the app
// ports of a tenant given to its namespace's pods only (the pool's
// -owner).
func TestTenantsOfTheManagerAndThePool(t *testing.T) {
	z := zspec()
	z.Tenants = []zv1.Tenant{
		{Name: "r", TrustGroup: "red",
			ServiceIDs: zv1.ServiceIDRange{First: 10, Last: 19},
			Slices:     []zv1.Slice{{Port: "wan", VLAN: 10}, {Port: "znapp1"}}},
		{Name: "b", TrustGroup: "blue",
			ServiceIDs: zv1.ServiceIDRange{First: 20, Last: 20},
			Slices: []zv1.Slice{{Port: "wan", Prefix: "10.2.0.0/16"},
				{Port: "in", MAC: "02:00:00:00:00:01"}}},
	}
	got := strings.Join(ManagerCommand(&z), " ")
	want := "--trust-group red:1023 --trust-group blue:511 " +
		"--tenant r=red,services=10-19 --slice r:1:vlan=10 --slice r:3 " +
		"--tenant b=blue,services=20-20 --slice b:1:prefix=10.2.0.0/16 " +
		"--slice b:0:mac=02:00:00:00:00:01 --nf-tx-queues 4 --nf-tx-queues-by-request -c svc:1,port:1"
	if !strings.Contains(got, want) {
		t.Fatalf("\n got %s\nwant ... %s ...", got, want)
	}
	if o := AppPortOwners(&z); fmt.Sprint(o) != "[znapp1=r]" {
		t.Fatalf("owners %v", o)
	}
	var ds appsv1.DaemonSet
	(&ZeroNFReconciler{Image: "img"}).fillAgent(&ds, &zv1.ZeroNF{Spec: z})
	pool := strings.Join(ds.Spec.Template.Spec.InitContainers[0].Command, " ")
	if !strings.HasSuffix(pool, " -owner znapp1=r") {
		t.Fatalf("pool: %s", pool)
	}
	if sp := z.SlicedPorts(); fmt.Sprint(sp) != "map[0:b 1:b 3:r]" {
		t.Fatalf("sliced %v", sp)
	}
}

func TestSlotRangesDivideTheManagersSlots(t *testing.T) {
	z := zspec()
	nf, groups := SlotRanges(&z)
	if nf != "0-31" || fmt.Sprint(groups) != "[red=32-39 blue=40-43]" {
		t.Fatalf("%s %v", nf, groups)
	}
	z.NFSlots = 0
	if nf, groups = SlotRanges(&z); nf != "" || groups[0] != "red=0-7" {
		t.Fatalf("%q %v", nf, groups)
	}
}

func TestNodeAgent(t *testing.T) {
	r := &ZeroNFReconciler{Image: "zeronf:dev", Namespace: "zeronf-system"}
	z := &zv1.ZeroNF{Spec: zspec()}
	var ds appsv1.DaemonSet
	r.fillAgent(&ds, z)
	ps := ds.Spec.Template.Spec
	if !ps.HostNetwork || !ps.HostPID || len(ps.Containers) != 2 || len(ps.InitContainers) != 1 {
		t.Fatalf("pod: %+v", ps)
	}
	m, a, pool := ps.Containers[0], ps.Containers[1], ps.InitContainers[0]
	// --mem 128, red's 1023 buffers and blue's 511 each in 36 MiB
	if q := m.Resources.Limits["hugepages-2Mi"]; q.Value() != (128+36+34)<<20 {
		t.Fatalf("hugepages %v", m.Resources.Limits)
	}
	if m.Image != "zeronf:dev" || !*m.SecurityContext.Privileged {
		t.Fatalf("manager: %+v", m)
	}
	if got := strings.Join(a.Command, " "); got != "/usr/local/bin/zeronf-node agent "+
		"-instance $(NODE_NAME) -nf-slots 0-31 -group red=32-39 -group blue=40-43 "+
		"-tx-queues in=0:4 -pool znapp" {
		t.Fatalf("agent: %s", got)
	}
	// the agent: no privilege, only what removing its pool's pairs takes
	sc := a.SecurityContext
	if sc.Privileged != nil || fmt.Sprint(sc.Capabilities.Drop, sc.Capabilities.Add) != "[ALL] [NET_ADMIN]" {
		t.Fatalf("agent's security: %+v", sc)
	}
	if got := strings.Join(pool.Command, " "); got != "/usr/local/bin/zeronf-node pool "+
		"-prefix znapp -count 2 -mtu 1500 -cni-bin-dir /host/opt/cni/bin" {
		t.Fatalf("pool: %s", got)
	}
	// metrics: a port on the node, the agent serving it
	z.Spec.MetricsPort = 9479
	r.fillAgent(&ds, z)
	a = ds.Spec.Template.Spec.Containers[1]
	if !strings.Contains(strings.Join(a.Command, " "), "-metrics-address :9479") ||
		len(a.Ports) != 1 || a.Ports[0].Name != "metrics" || a.Ports[0].HostPort != 9479 {
		t.Fatalf("metrics: %v %+v", a.Command, a.Ports)
	}
	// without app ports: no pool, no CNI directories, no capability
	z.Spec.AppPorts = 0
	ds = appsv1.DaemonSet{}
	r.fillAgent(&ds, z)
	ps = ds.Spec.Template.Spec
	if len(ps.InitContainers) != 0 || len(ps.Volumes) != 3 ||
		ps.Containers[1].SecurityContext.Capabilities.Add != nil {
		t.Fatalf("no app ports: %+v", ps)
	}
	// a dashboard: zeronf api beside them, nothing of the manager's but
	// its runtime directory (read-only) and the token's Secret
	z.Spec.Dashboard = &zv1.Dashboard{Port: 8090}
	r.DashboardImage = "dash:dev"
	r.fillAgent(&ds, z)
	ps = ds.Spec.Template.Spec
	d := ps.Containers[2]
	if len(ps.Containers) != 3 || d.Image != "dash:dev" || d.Ports[0].HostPort != 8090 ||
		!strings.Contains(strings.Join(d.Command, " "), "-m zeronf -i $(NODE_NAME) api --listen 0.0.0.0:8090 "+
			"--token-file /etc/zeronf-dashboard/token --allow-host localhost --allow-host zeronf-dashboard ") {
		t.Fatalf("dashboard: %+v", d)
	}
	if sc := d.SecurityContext; !*sc.ReadOnlyRootFilesystem || sc.Privileged != nil ||
		fmt.Sprint(sc.Capabilities.Drop, sc.Capabilities.Add) != "[ALL] []" ||
		len(d.VolumeMounts) != 2 || !d.VolumeMounts[0].ReadOnly || !d.VolumeMounts[1].ReadOnly {
		t.Fatalf("dashboard's security: %+v %+v", sc, d.VolumeMounts)
	}
	if v := ps.Volumes[len(ps.Volumes)-1]; v.Secret == nil || v.Secret.SecretName != DashboardName ||
		*v.Secret.DefaultMode != 0o400 {
		t.Fatalf("token volume: %+v", v)
	}
	z.Spec.Dashboard = nil
	// the spec's image wins
	z.Spec.Image = "mine:1"
	r.fillAgent(&ds, z)
	if ds.Spec.Template.Spec.Containers[0].Image != "mine:1" {
		t.Fatal("spec.image not used")
	}
}

func TestDefaultChainNamesPorts(t *testing.T) {
	z := zspec()
	z.DefaultChain = []string{"svc:3", "port:znapp1", "drop"}
	if h, err := z.DefaultChainHops(); err != nil || strings.Join(h, ",") != "svc:3,port:3,drop" {
		t.Fatalf("%v %v", h, err)
	}
	z.DefaultChain = []string{"port:nosuch"}
	if _, err := z.DefaultChainHops(); err == nil || err.Error() != `defaultChain[0]: no port "nosuch"` {
		t.Fatalf("%v", err)
	}
}

// What of the tenants' slices the schema cannot say (a rule over every
// pair of slices is past the API server's CEL budget) the operator does.
func TestTenantsError(t *testing.T) {
	z := zspec()
	ok := []zv1.Tenant{{Name: "r", TrustGroup: "red", ServiceIDs: zv1.ServiceIDRange{First: 1, Last: 2},
		Slices: []zv1.Slice{{Port: "wan", VLAN: 10}, {Port: "znapp1"}}},
		{Name: "b", TrustGroup: "blue", ServiceIDs: zv1.ServiceIDRange{First: 3, Last: 3},
			Slices: []zv1.Slice{{Port: "wan", VLAN: 11}}}}
	z.Tenants = ok
	if err := z.TenantsError(); err != nil {
		t.Fatal(err)
	}
	for want, change := range map[string]func(*zv1.ZeroNFSpec){
		`tenants[1].slices[0]: no port "lan"`: func(z *zv1.ZeroNFSpec) { z.Tenants[1].Slices[0].Port = "lan" },
		`tenants[1].slices[0]: the same slice as tenants[0].slices[0]`: func(z *zv1.ZeroNFSpec) {
			z.Tenants[1].Slices[0].VLAN = 10
		},
		`tenants[0].slices[1]: app port znapp1: a tenant's whole (its namespace's pods get it)`: func(z *zv1.ZeroNFSpec) {
			z.Tenants[0].Slices[1].Prefix = "10.0.0.0/8"
		},
		`tenants[1].slices[1]: the same slice as tenants[0].slices[1]`: func(z *zv1.ZeroNFSpec) {
			z.Tenants[1].Slices = append(z.Tenants[1].Slices, zv1.Slice{Port: "znapp1"})
		},
	} {
		z := zspec()
		for _, tn := range ok {
			tn.Slices = append([]zv1.Slice(nil), tn.Slices...)
			z.Tenants = append(z.Tenants, tn)
		}
		change(&z)
		if err := z.TenantsError(); err == nil || err.Error() != want {
			t.Errorf("%v, want %s", err, want)
		}
	}
}
