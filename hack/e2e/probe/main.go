// Command probe is what the end-to-end tests run inside a Pod to see the
// cluster as a workload does: an HTTP(S) GET of a URL, with or without the
// Pod's ServiceAccount token, or a TCP connection that must not get through.
// It prints one JSON line (status code, body or error) for the test to read
// from the Pod's log, and exits 0 whatever the answer: the test judges it.
//
//	probe get --url https://svc:8443/metrics --token-file /var/run/secrets/kubernetes.io/serviceaccount/token
//	probe dial --address 192.0.2.1:443 --timeout 3s
//
// It is also the CloudEvents receiver the change sink is pointed at, built
// with the CloudEvents Go SDK: it prints each event it receives as one line
// of JSON (the event in structured form) until it is stopped.
//
//	probe receive --listen 0.0.0.0:8080
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
)

// result is the one line the probe prints.
type result struct {
	Status int    `json:"status,omitempty"`
	Body   string `json:"body,omitempty"`
	Error  string `json:"error,omitempty"`
}

func main() {
	r, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(2)
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(2)
	}
}

func run(args []string) (result, error) {
	if len(args) == 0 {
		return result{}, errors.New("want a command: get, dial or receive")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	url := fs.String("url", "", "URL to GET")
	tokenFile := fs.String("token-file", "", "send the token in this file as a bearer token")
	address := fs.String("address", "", "host:port to dial")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	listen := fs.String("listen", "0.0.0.0:8080", "address to receive CloudEvents on")
	if err := fs.Parse(args[1:]); err != nil {
		return result{}, err
	}
	if args[0] == "receive" {
		return receive(*listen)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	switch args[0] {
	case "get":
		return get(ctx, *url, *tokenFile)
	case "dial":
		return dial(ctx, *address), nil
	default:
		return result{}, fmt.Errorf("unknown command %q", args[0])
	}
}

func get(ctx context.Context, url, tokenFile string) (result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return result{}, fmt.Errorf("request: %w", err)
	}
	if tokenFile != "" {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			return result{}, fmt.Errorf("token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	// The manager serves a self-signed certificate, as the ServiceMonitor's
	// insecureSkipVerify expects; the token is what keeps the endpoint closed.
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
	}}
	resp, err := client.Do(req)
	if err != nil {
		return result{Error: err.Error()}, nil
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return result{Status: resp.StatusCode, Error: err.Error()}, nil
	}
	return result{Status: resp.StatusCode, Body: string(body)}, nil
}

func dial(ctx context.Context, address string) result {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return result{Error: err.Error()}
	}
	_ = conn.Close()
	return result{}
}

// receive prints every CloudEvent received on listen as one JSON line,
// until SIGTERM or SIGINT.
func receive(listen string) (result, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return result{}, err
	}
	client, err := cloudevents.NewClientHTTP(cehttp.WithListener(ln))
	if err != nil {
		return result{}, err
	}
	var mu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	err = client.StartReceiver(ctx, func(e cloudevents.Event) protocol.Result {
		mu.Lock()
		defer mu.Unlock()
		if err := out.Encode(e); err != nil {
			return protocol.NewReceipt(false, "printing the event: %v", err)
		}
		return protocol.ResultACK
	})
	if err != nil {
		return result{Error: err.Error()}, nil
	}
	return result{}, nil
}
