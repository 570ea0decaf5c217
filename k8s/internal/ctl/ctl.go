// Package ctl is a client of a ZeroNF manager's control socket
// (docs/control-protocol.md): JSON-RPC 2.0, one object per line, over the
// unix stream socket <runtime dir>/zeronf.sock. Errors are the manager's
// negative errno codes with their messages.
package ctl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"
)

// Version is the protocol version this client speaks.
const Version = "1.1"

// Error is the manager's answer to a request it refused.
type Error struct {
	Method  string
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Method, e.Message, e.Code)
}

// Client is one connection; its calls are serialised.
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
	id   int
}

// Dial connects to the control socket at path.
func Dial(path string, timeout time.Duration) (*Client, error) {
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, err
	}
	return &Client{conn: c, r: bufio.NewReaderSize(c, 1<<16)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
	Version string `json:"version"`
}

type reply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// Call sends method with params (nil: none) and decodes the result into
// out (nil: ignored). Each call has 30 s for its answer.
func (c *Client) Call(method string, params any, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.id++
	b, err := json.Marshal(request{JSONRPC: "2.0", ID: c.id, Method: method,
		Params: params, Version: Version})
	if err != nil {
		return err
	}
	_ = c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.conn.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("%s: no answer: %w", method, err)
	}
	var rep reply
	if err := json.Unmarshal(line, &rep); err != nil {
		return fmt.Errorf("%s: bad answer: %w", method, err)
	}
	if rep.ID != c.id {
		return fmt.Errorf("%s: answer to request %d, not %d", method, rep.ID, c.id)
	}
	if rep.Error != nil {
		rep.Error.Method = method
		return rep.Error
	}
	if out != nil {
		return json.Unmarshal(rep.Result, out)
	}
	return nil
}
