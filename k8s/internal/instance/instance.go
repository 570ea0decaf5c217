// Package instance finds a ZeroNF manager's files as its NFs do
// (lib/common/zn_instance.c): the runtime directory, the instance lock the
// manager holds for its life, the trust groups' list, the NF slots' lock
// files.
package instance

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The names libzeronf uses (lib/common/zn_instance.h, lib/shm/zn_kick.h,
// lib/shm/zn_shm.h): kept the same here.
const (
	LockFile      = "zeronf.lock"
	GroupsFile    = "zeronf-groups"
	CtlSock       = "zeronf.sock"
	KickSock      = "zeronf-kick.sock"
	SlotLockFmt   = "zeronf-nf%d.lock"
	GroupKickFmt  = "zeronf-kick-tg%d.sock"
	MaxNFs        = 96
	hugeSuffixFmt = "%smap_"
)

// Instance is one manager's files on this host.
type Instance struct {
	Name    string
	RunBase string // /var/run for root: the runtime dir is RunBase/dpdk/Name
	HugeDir string // its hugetlbfs directory
}

// RunDir is DPDK's runtime directory of the instance.
func (i Instance) RunDir() string { return filepath.Join(i.RunBase, "dpdk", i.Name) }

// Path is a file of the runtime directory.
func (i Instance) Path(file string) string { return filepath.Join(i.RunDir(), file) }

// SlotLock is slot s's lock file.
func (i Instance) SlotLock(s int) string { return i.Path(fmt.Sprintf(SlotLockFmt, s)) }

// Alive says whether the manager runs: it holds its instance lock
// exclusively for its life, so a shared lock taken here means it is gone.
func (i Instance) Alive() bool { return held(i.Path(LockFile)) }

// Ready says whether it is alive and has said it is ready for NFs (the
// lock file's third field).
func (i Instance) Ready() bool {
	if !i.Alive() {
		return false
	}
	b, err := os.ReadFile(i.Path(LockFile))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) >= 3 && f[2] == "1"
}

// EnsureSlotLock makes slot s's lock file if it is not there (as
// libzeronf's claim would: 0600, the manager's user), so it can be bound
// into a container.
func (i Instance) EnsureSlotLock(s int) error {
	p := i.SlotLock(s)
	if st, err := os.Lstat(p); err == nil {
		if st.Mode().IsRegular() {
			return nil
		}
		// an empty directory: what a container runtime made of a bind
		// mount whose file was gone (the manager's cleanup does the same)
		if !st.IsDir() || os.Remove(p) != nil {
			return fmt.Errorf("%s is not a file", p)
		}
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// SlotHeld says whether an NF holds slot s.
func (i Instance) SlotHeld(s int) bool { return held(i.SlotLock(s)) }

func held(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// Group is a trust group as its NFs find it.
type Group struct {
	Index int
	Name  string
	File  string // its hugepage file: all its NFs map
}

// Groups reads the manager's list of trust groups (none: an empty list).
func (i Instance) Groups() ([]Group, error) {
	f, err := os.Open(i.Path(GroupsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Group
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		x := strings.SplitN(sc.Text(), " ", 3)
		if len(x) != 3 {
			continue
		}
		n, err := strconv.Atoi(x[0])
		if err != nil {
			continue
		}
		out = append(out, Group{Index: n, Name: x[1], File: x[2]})
	}
	return out, sc.Err()
}

// HugeFiles are the instance's hugepage files (DPDK's PREFIXmap_N), what a
// secondary maps.
func (i Instance) HugeFiles() ([]string, error) {
	ents, err := os.ReadDir(i.HugeDir)
	if err != nil {
		return nil, err
	}
	pre := fmt.Sprintf(hugeSuffixFmt, i.Name)
	var out []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), pre)
		if !ok {
			continue
		}
		if _, err := strconv.Atoi(rest); err == nil {
			out = append(out, filepath.Join(i.HugeDir, e.Name()))
		}
	}
	return out, nil
}
