package cni

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtool's legacy TX checksumming commands (include/uapi/linux/ethtool.h).
const (
	ethtoolGTxCsum = 0x00000016
	ethtoolSTxCsum = 0x00000017
)

type ethtoolValue struct {
	cmd  uint32
	data uint32
}

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

func ethtool(ifName string, v *ethtoolValue) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var req ifreqData
	if len(ifName) >= len(req.name) {
		return fmt.Errorf("%q: name too long", ifName)
	}
	copy(req.name[:], ifName)
	req.data = unsafe.Pointer(v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL,
		uintptr(unsafe.Pointer(&req)))
	if errno != 0 {
		return fmt.Errorf("%s: ethtool: %w", ifName, errno)
	}
	return nil
}

// txChecksumOff turns TX checksum offload off on ifName (and with it the
// kernel turns off TSO and scatter-gather, which need it): a veth leaves
// a TCP or UDP checksum for its peer's kernel to fill in, and the
// manager's net_af_packet port on that peer takes the packet as it is, so
// the pod at the other end would drop it as corrupt (its InCsumErrors;
// tests/system/netns.py no_offloads does the same with ethtool). Not in
// golang.org/x/sys: an ioctl of our own.
func txChecksumOff(ifName string) error {
	return ethtool(ifName, &ethtoolValue{cmd: ethtoolSTxCsum, data: 0})
}

// txChecksum: whether ifName offloads TX checksums.
func txChecksum(ifName string) (bool, error) {
	v := ethtoolValue{cmd: ethtoolGTxCsum}
	err := ethtool(ifName, &v)
	return v.data != 0, err
}
