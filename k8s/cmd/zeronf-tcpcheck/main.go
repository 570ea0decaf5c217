// Command zeronf-tcpcheck checks that every byte of TCP connections arrives,
// in order: the cluster tests run it in pods whose traffic crosses a ZeroNF
// chain (tests/cluster).
//
//	zeronf-tcpcheck serve [-listen :7000]
//	zeronf-tcpcheck send -to ADDR:PORT [-bytes N] [-conns C] [-seed S]
//	zeronf-tcpcheck pulse -to ADDR:PORT [-every D]
//
// The sender writes N bytes of a stream seeded by S on each of C
// connections (seeds S, S+1, ...), half-closes, and reads the server's
// answer: the bytes it received and their SHA-256. It prints one JSON
// line: {"conns":C,"bytes":N,"ok":K,"errors":[...]}, and exits 1 unless
// every connection's count and digest are the sender's.
//
// pulse sends a UDP datagram (its sequence number) every D until killed,
// broadcast allowed: to a subnet's broadcast address it needs no ARP
// answer, so the datagrams leave the pod while nothing answers yet
// (make bench BENCH=k8s times an NF's first packet with them).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: zeronf-tcpcheck serve|send|pulse [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2:])
	case "send":
		os.Exit(send(os.Args[2:]))
	case "pulse":
		os.Exit(pulse(os.Args[2:]))
	default:
		fmt.Fprintf(os.Stderr, "zeronf-tcpcheck: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

// serve answers each connection, once its peer half-closed, with
// "BYTES HEX-SHA256\n" of what it read.
func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", ":7000", "address to listen on")
	_ = fs.Parse(args)
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zeronf-tcpcheck:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		go func(c net.Conn) {
			defer c.Close()
			h := sha256.New()
			n, err := io.Copy(h, c)
			if err != nil {
				fmt.Fprintf(c, "ERR %v\n", err)
				return
			}
			fmt.Fprintf(c, "%d %s\n", n, hex.EncodeToString(h.Sum(nil)))
		}(c)
	}
}

type result struct {
	Conns  int      `json:"conns"`
	Bytes  int64    `json:"bytes"`
	OK     int      `json:"ok"`
	Errors []string `json:"errors"`
}

func send(args []string) int {
	fs := flag.NewFlagSet("send", flag.ExitOnError)
	to := fs.String("to", "", "server address, HOST:PORT")
	n := fs.Int64("bytes", 1<<20, "bytes per connection")
	conns := fs.Int("conns", 1, "connections, at once")
	seed := fs.Uint64("seed", 1, "first connection's stream seed")
	timeout := fs.Duration("timeout", 60*time.Second, "per connection")
	_ = fs.Parse(args)
	if *to == "" {
		fmt.Fprintln(os.Stderr, "zeronf-tcpcheck send: -to is required")
		return 2
	}
	res := result{Conns: *conns, Bytes: *n, Errors: []string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < *conns; i++ {
		wg.Add(1)
		go func(s uint64) {
			defer wg.Done()
			err := one(*to, *n, s, *timeout)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.Errors = append(res.Errors, err.Error())
			} else {
				res.OK++
			}
		}(*seed + uint64(i))
	}
	wg.Wait()
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	if res.OK != *conns {
		return 1
	}
	return 0
}

func one(to string, n int64, seed uint64, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", to, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	h := sha256.New()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	buf := make([]byte, 32<<10)
	for left := n; left > 0; {
		k := int64(len(buf))
		if left < k {
			k = left
		}
		for j := int64(0); j < k; j += 8 {
			v := r.Uint64()
			for b := int64(0); b < 8 && j+b < k; b++ {
				buf[j+b] = byte(v >> (8 * b))
			}
		}
		if _, err := c.Write(buf[:k]); err != nil {
			return fmt.Errorf("seed %d: write: %w", seed, err)
		}
		h.Write(buf[:k])
		left -= k
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return fmt.Errorf("seed %d: close: %w", seed, err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("seed %d: no answer: %w", seed, err)
	}
	want := fmt.Sprintf("%d %s\n", n, hex.EncodeToString(h.Sum(nil)))
	if line != want {
		return fmt.Errorf("seed %d: server got %q, sent %q", seed, line, want)
	}
	return nil
}

func pulse(args []string) int {
	fs := flag.NewFlagSet("pulse", flag.ExitOnError)
	to := fs.String("to", "", "destination, HOST:PORT (a broadcast address too)")
	every := fs.Duration("every", time.Millisecond, "interval between datagrams")
	_ = fs.Parse(args)
	dst, err := net.ResolveUDPAddr("udp4", *to)
	if err != nil || *to == "" {
		fmt.Fprintln(os.Stderr, "zeronf-tcpcheck pulse: -to HOST:PORT is required:", err)
		return 2
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_BROADCAST, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp4", ":0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "zeronf-tcpcheck pulse:", err)
		return 1
	}
	var seq [8]byte
	for n := uint64(0); ; n++ {
		binary.BigEndian.PutUint64(seq[:], n)
		// a full queue or no route yet: the next one tries again
		_, _ = pc.WriteTo(seq[:], dst)
		time.Sleep(*every)
	}
}
