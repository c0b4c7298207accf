package jupyter

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
)

// ConnectionInfo is a kernel's connection file: where its five channels
// listen and the key its messages are signed with.
type ConnectionInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name"`
}

// NewConnectionInfo returns loopback TCP connection info with five free
// ports and a fresh random key.
//
// The ports are free when chosen and handed to the kernel, which binds
// them; another process could take one in between (jupyter_client has the
// same race), in which case the kernel fails to start and the caller
// tries again.
func NewConnectionInfo() (ConnectionInfo, error) {
	ports := make([]int, 5)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ConnectionInfo{}, fmt.Errorf("jupyter: choosing a loopback port for the kernel: %w", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ConnectionInfo{
		Transport: "tcp", IP: "127.0.0.1",
		ShellPort: ports[0], IOPubPort: ports[1], StdinPort: ports[2], ControlPort: ports[3], HBPort: ports[4],
		Key: NewID() + NewID(), SignatureScheme: "hmac-sha256", KernelName: "python3",
	}, nil
}

// WriteFile writes the connection file, readable by its owner only (it
// holds the signing key).
func (c ConnectionInfo) WriteFile(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("jupyter: writing the connection file: %w", err)
	}
	return nil
}

// ReadConnectionFile reads a kernel's connection file.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	var c ConnectionInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("jupyter: reading the connection file: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("jupyter: connection file %s: %w", path, err)
	}
	if c.SignatureScheme != "" && c.SignatureScheme != "hmac-sha256" {
		return c, fmt.Errorf("jupyter: connection file %s: signature scheme %q is not supported; use hmac-sha256", path, c.SignatureScheme)
	}
	return c, nil
}

func (c ConnectionInfo) endpoint(port int) string {
	return fmt.Sprintf("%s://%s:%d", c.Transport, c.IP, port)
}
