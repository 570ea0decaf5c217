package cni

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
	"github.com/containernetworking/plugins/pkg/ip"
	"github.com/containernetworking/plugins/pkg/ipam"
	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

// NetConf is the plugin's configuration (a NetworkAttachmentDefinition's
// config, or a conflist's entry): the spec's, and
type NetConf struct {
	types.NetConf
	// Pool: the prefix of the node's pairs (DefaultPrefix).
	Pool string `json:"pool,omitempty"`
	// StateDir: where the node's attachments are recorded
	// (DefaultStateDir).
	StateDir string `json:"stateDir,omitempty"`
	// MTU of the pod's interface (0: the pair's).
	MTU int `json:"mtu,omitempty"`
	// RuntimeConfig: what the runtime passes for capabilities this
	// plugin has (Multus: a network selection element's "mac").
	RuntimeConfig struct {
		Mac string `json:"mac,omitempty"`
	} `json:"runtimeConfig,omitempty"`
}

// k8sArgs: what kubelet's runtime puts in CNI_ARGS.
type k8sArgs struct {
	types.CommonArgs
	K8S_POD_NAMESPACE types.UnmarshallableString //nolint:revive // the runtime's names
	K8S_POD_NAME      types.UnmarshallableString //nolint:revive
}

// Supported: the spec versions the plugin speaks.
var Supported = version.PluginSupports("0.3.0", "0.3.1", "0.4.0", "1.0.0")

// Funcs are the plugin's commands for skel.
var Funcs = skel.CNIFuncs{Add: Add, Del: Del, Check: Check}

func loadConf(b []byte) (*NetConf, error) {
	c := &NetConf{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("zeronf: config: %w", err)
	}
	if c.Pool == "" {
		c.Pool = DefaultPrefix
	}
	if err := CheckPrefix(c.Pool); err != nil {
		return nil, fmt.Errorf("zeronf: config: %w", err)
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	if c.MTU < 0 || c.MTU > 65535 {
		return nil, fmt.Errorf("zeronf: config: mtu %d", c.MTU)
	}
	if c.RuntimeConfig.Mac != "" {
		if _, err := net.ParseMAC(c.RuntimeConfig.Mac); err != nil {
			return nil, fmt.Errorf("zeronf: config: runtimeConfig mac: %w", err)
		}
	}
	if c.RawPrevResult != nil {
		if err := version.ParsePrevResult(&c.NetConf); err != nil {
			return nil, fmt.Errorf("zeronf: prevResult: %w", err)
		}
	}
	return c, nil
}

// Add attaches the pod to a free pair of the node's pool.
func Add(args *skel.CmdArgs) (err error) {
	c, err := loadConf(args.StdinData)
	if err != nil {
		return err
	}
	cns, err := ns.GetNS(args.Netns)
	if err != nil {
		return fmt.Errorf("zeronf: netns %q: %w", args.Netns, err)
	}
	defer cns.Close()
	unlock, err := lockState(c.StateDir)
	if err != nil {
		return fmt.Errorf("zeronf: state %s: %w", c.StateDir, err)
	}
	defer unlock()
	if r, _ := findRecord(c.StateDir, args.ContainerID, args.IfName); r != nil {
		return fmt.Errorf("zeronf: %s of container %s already has port %s",
			args.IfName, args.ContainerID, r.Port)
	}
	if !poolLive(c.StateDir, c.Pool) {
		return types.NewError(types.ErrTryAgainLater,
			fmt.Sprintf("zeronf: no pool %q on this node", c.Pool),
			"the ZeroNF node agent makes it (zeronf-node pool); is it running?")
	}
	free, err := freePodEnds(c.Pool)
	if err != nil {
		return err
	}
	ka := k8sArgs{}
	_ = types.LoadArgs(args.Args, &ka)
	owners, err := readOwners(c.StateDir, c.Pool)
	if err != nil {
		return fmt.Errorf("zeronf: %w", err)
	}
	free = forNamespace(free, owners, string(ka.K8S_POD_NAMESPACE))
	if len(free) == 0 {
		return types.NewError(types.ErrTryAgainLater,
			fmt.Sprintf("zeronf: every pair of pool %q that namespace %q may have is in a pod",
				c.Pool, string(ka.K8S_POD_NAMESPACE)),
			"more pairs: the ZeroNF resource's appPorts (a tenant's: its slices)")
	}
	podEnd := free[0]
	rec := &Attachment{ContainerID: args.ContainerID, IfName: args.IfName,
		Netns: args.Netns, Prefix: c.Pool,
		Port:      strings.TrimSuffix(podEnd, PodSuffix),
		Namespace: string(ka.K8S_POD_NAMESPACE), Pod: string(ka.K8S_POD_NAME)}
	// recorded first: a DEL after a failure half-way finds it
	if err := writeRecord(c.StateDir, rec); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(recordFile(c.StateDir, rec.Port))
		}
	}()
	mac, err := moveIn(podEnd, cns, args.IfName, c.MTU, c.RuntimeConfig.Mac)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = moveOut(cns, args.IfName)
		}
	}()
	rec.Mac = mac

	res := &current.Result{CNIVersion: current.ImplementedSpecVersion}
	if c.PrevResult != nil {
		prev, err := current.NewResultFromResult(c.PrevResult)
		if err != nil {
			return fmt.Errorf("zeronf: prevResult: %w", err)
		}
		res = prev
	}
	idx := len(res.Interfaces)
	res.Interfaces = append(res.Interfaces, &current.Interface{
		Name: args.IfName, Mac: mac, Sandbox: cns.Path()})
	if c.IPAM.Type != "" {
		r, err := ipam.ExecAdd(c.IPAM.Type, args.StdinData)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = ipam.ExecDel(c.IPAM.Type, args.StdinData)
			}
		}()
		ir, err := current.NewResultFromResult(r)
		if err != nil {
			return err
		}
		if len(ir.IPs) == 0 {
			return errors.New("zeronf: IPAM gave no address")
		}
		for _, ipc := range ir.IPs {
			ipc.Interface = current.Int(idx)
			rec.IPs = append(rec.IPs, ipc.Address.String())
		}
		if err := cns.Do(func(ns.NetNS) error {
			return ipam.ConfigureIface(args.IfName, &current.Result{
				Interfaces: []*current.Interface{res.Interfaces[idx]},
				IPs:        reindex(ir.IPs), Routes: ir.Routes})
		}); err != nil {
			return fmt.Errorf("zeronf: addresses: %w", err)
		}
		res.IPs = append(res.IPs, ir.IPs...)
		res.Routes = append(res.Routes, ir.Routes...)
	}
	if c.DNS.Nameservers != nil || c.DNS.Domain != "" {
		res.DNS = c.DNS
	}
	if err := writeRecord(c.StateDir, rec); err != nil {
		return err
	}
	return types.PrintResult(res, c.CNIVersion)
}

// reindex: ConfigureIface is given our interface alone (index 0).
func reindex(ips []*current.IPConfig) []*current.IPConfig {
	out := make([]*current.IPConfig, len(ips))
	for i, x := range ips {
		y := *x
		y.Interface = current.Int(0)
		out[i] = &y
	}
	return out
}

// moveIn puts the pod end into the pod's namespace as ifName, its pool
// name in its alias, up; it says its MAC address.
func moveIn(podEnd string, cns ns.NetNS, ifName string, mtu int, mac string) (string, error) {
	l, err := netlinksafe.LinkByName(podEnd)
	if err != nil {
		return "", fmt.Errorf("zeronf: %s: %w", podEnd, err)
	}
	if err := netlink.LinkSetNsFd(l, int(cns.Fd())); err != nil {
		return "", fmt.Errorf("zeronf: %s into the pod: %w", podEnd, err)
	}
	var hw string
	err = cns.Do(func(host ns.NetNS) (err error) {
		l, err := netlinksafe.LinkByName(podEnd)
		if err != nil {
			return fmt.Errorf("zeronf: %s in the pod: %w", podEnd, err)
		}
		defer func() {
			if err != nil { // back as it was
				_ = netlink.LinkSetDown(l)
				_ = netlink.LinkSetName(l, podEnd)
				_ = netlink.LinkSetNsFd(l, int(host.Fd()))
			}
		}()
		if err = netlink.LinkSetAlias(l, podEnd); err != nil {
			return fmt.Errorf("zeronf: alias: %w", err)
		}
		if err = netlink.LinkSetName(l, ifName); err != nil {
			return fmt.Errorf("zeronf: %s -> %s: %w", podEnd, ifName, err)
		}
		if err = txChecksumOff(ifName); err != nil {
			return fmt.Errorf("zeronf: %w", err)
		}
		if mtu > 0 {
			if err = netlink.LinkSetMTU(l, mtu); err != nil {
				return fmt.Errorf("zeronf: mtu %d: %w", mtu, err)
			}
		}
		if mac != "" {
			m, _ := net.ParseMAC(mac)
			if err = netlink.LinkSetHardwareAddr(l, m); err != nil {
				return fmt.Errorf("zeronf: mac %s: %w", mac, err)
			}
		}
		if err = netlink.LinkSetUp(l); err != nil {
			return fmt.Errorf("zeronf: %s up: %w", ifName, err)
		}
		l, err = netlinksafe.LinkByName(ifName)
		if err != nil {
			return err
		}
		hw = l.Attrs().HardwareAddr.String()
		return nil
	})
	return hw, err
}

// moveOut gives the pod's interface back to this namespace under its
// pool name, down, its addresses gone. An interface that is not there
// (gone already) is not an error.
func moveOut(cns ns.NetNS, ifName string) error {
	return cns.Do(func(host ns.NetNS) error {
		l, err := netlinksafe.LinkByName(ifName)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				return nil
			}
			return fmt.Errorf("zeronf: %s: %w", ifName, err)
		}
		name := l.Attrs().Alias
		if !strings.HasSuffix(name, PodSuffix) {
			return fmt.Errorf("zeronf: %s is no pair of a ZeroNF pool (alias %q)", ifName, name)
		}
		_ = netlink.LinkSetDown(l)
		addrs, _ := netlinksafe.AddrList(l, netlink.FAMILY_ALL)
		for i := range addrs {
			_ = netlink.AddrDel(l, &addrs[i])
		}
		if err := netlink.LinkSetName(l, name); err != nil {
			return fmt.Errorf("zeronf: %s -> %s: %w", ifName, name, err)
		}
		_ = netlink.LinkSetAlias(l, "zeronf pool")
		if err := netlink.LinkSetNsFd(l, int(host.Fd())); err != nil {
			_ = netlink.LinkSetName(l, ifName)
			return fmt.Errorf("zeronf: %s back to the node: %w", name, err)
		}
		return nil
	})
}

// Del gives the pod's pair back to the pool (or deletes it when the pool
// is gone) and its address back to IPAM. What is already gone is no
// error: the runtime may call it more than once.
func Del(args *skel.CmdArgs) error {
	c, err := loadConf(args.StdinData)
	if err != nil {
		return err
	}
	unlock, err := lockState(c.StateDir)
	if err != nil {
		return fmt.Errorf("zeronf: state %s: %w", c.StateDir, err)
	}
	defer unlock()
	var errs []error
	rec, _ := findRecord(c.StateDir, args.ContainerID, args.IfName)
	if args.Netns != "" {
		if cns, err := ns.GetNS(args.Netns); err == nil {
			if err := moveOut(cns, args.IfName); err != nil {
				errs = append(errs, err)
			}
			cns.Close()
		}
	}
	if c.IPAM.Type != "" {
		if err := ipam.ExecDel(c.IPAM.Type, args.StdinData); err != nil {
			errs = append(errs, err)
		}
	}
	if rec != nil && len(errs) == 0 {
		if !poolLive(c.StateDir, rec.Prefix) {
			if l, err := netlinksafe.LinkByName(rec.Port); err == nil {
				_ = netlink.LinkDel(l)
			}
		}
		// A pod's namespace gone before its DEL took the pair with it
		// (a veth's ends die together): the manager's port is then gone
		// until the node agent makes the pair again and the manager
		// restarts (docs/kubernetes.md).
		if err := os.Remove(recordFile(c.StateDir, rec.Port)); err != nil &&
			!errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Check: the pod's interface is where ADD put it, with the addresses
// ADD reported, and its pair's manager end is on the node, up.
func Check(args *skel.CmdArgs) error {
	c, err := loadConf(args.StdinData)
	if err != nil {
		return err
	}
	if c.PrevResult == nil {
		return errors.New("zeronf: CHECK without prevResult")
	}
	res, err := current.NewResultFromResult(c.PrevResult)
	if err != nil {
		return err
	}
	rec, err := findRecord(c.StateDir, args.ContainerID, args.IfName)
	if err != nil || rec == nil {
		return fmt.Errorf("zeronf: no port recorded for %s of container %s",
			args.IfName, args.ContainerID)
	}
	if c.IPAM.Type != "" {
		if err := ipam.ExecCheck(c.IPAM.Type, args.StdinData); err != nil {
			return err
		}
	}
	m, err := netlinksafe.LinkByName(rec.Port)
	if err != nil {
		return fmt.Errorf("zeronf: the manager's end %s: %w", rec.Port, err)
	}
	if m.Attrs().Flags&net.FlagUp == 0 {
		return fmt.Errorf("zeronf: the manager's end %s is down", rec.Port)
	}
	var ips []*current.IPConfig
	for i, itf := range res.Interfaces {
		if itf.Name == args.IfName && itf.Sandbox == args.Netns {
			for _, ipc := range res.IPs {
				if ipc.Interface != nil && *ipc.Interface == i {
					ips = append(ips, ipc)
				}
			}
		}
	}
	cns, err := ns.GetNS(args.Netns)
	if err != nil {
		return fmt.Errorf("zeronf: netns %q: %w", args.Netns, err)
	}
	defer cns.Close()
	return cns.Do(func(ns.NetNS) error {
		l, err := netlinksafe.LinkByName(args.IfName)
		if err != nil {
			return fmt.Errorf("zeronf: %s: %w", args.IfName, err)
		}
		if l.Attrs().Alias != rec.Port+PodSuffix {
			return fmt.Errorf("zeronf: %s is %q, not %s", args.IfName, l.Attrs().Alias,
				rec.Port+PodSuffix)
		}
		if l.Attrs().Flags&net.FlagUp == 0 {
			return fmt.Errorf("zeronf: %s is down", args.IfName)
		}
		if on, err := txChecksum(args.IfName); err != nil || on {
			return fmt.Errorf("zeronf: %s offloads TX checksums (%v): its TCP would not "+
				"cross the manager", args.IfName, err)
		}
		if rec.Mac != "" && l.Attrs().HardwareAddr.String() != rec.Mac {
			return fmt.Errorf("zeronf: %s has MAC %s, not %s", args.IfName,
				l.Attrs().HardwareAddr, rec.Mac)
		}
		return ip.ValidateExpectedInterfaceIPs(args.IfName, ips)
	})
}
