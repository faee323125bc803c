// The ceiling of clustered streaming's publish path, measured with the official Go
// client (nats.go, Debian's golang-github-nats-io-go-nats-dev) instead of Node: one
// publisher putting N messages into a fresh three-replica stream with the Leader's two
// headers (Nats-Expected-Last-Sequence, Stan-Timestamp), its replies on one inbox,
// at most WINDOW unacknowledged. It tells whether the Node publisher
// (dist/bench/jetstream-ceiling.js) or nats-server's R3 stream is the limit: run both
// against the same cluster, interleaved.
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go build -o /tmp/js-ceiling bench/native/jetstream-ceiling.go
//	/tmp/js-ceiling <urls> <N> <size> <window> <headers:0|1> [<streams>]
//
// Prints one JSON line. With <streams> > 1 the N messages are spread over that many
// streams (one publisher each, on one connection), to see what the cluster takes in
// all rather than through one stream.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) < 6 {
		fmt.Fprintln(os.Stderr, "usage: js-ceiling <urls> <N> <size> <window> <headers:0|1> [<streams>]")
		os.Exit(2)
	}
	urls := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	size, _ := strconv.Atoi(os.Args[3])
	window, _ := strconv.Atoi(os.Args[4])
	withHeaders := os.Args[5] == "1"
	streams := 1
	if len(os.Args) > 6 {
		streams, _ = strconv.Atoi(os.Args[6])
	}
	nc, err := nats.Connect(urls)
	must(err)
	defer nc.Close()
	js, err := nc.JetStream()
	must(err)
	base := fmt.Sprintf("GCEIL_%d", time.Now().UnixNano())
	for s := 0; s < streams; s++ {
		name := fmt.Sprintf("%s_%d", base, s)
		_, err = js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{name + ".x"}, Replicas: 3})
		must(err)
	}
	data := make([]byte, size)
	per := n / streams
	var wg sync.WaitGroup
	var errors int64
	start := time.Now()
	for s := 0; s < streams; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			name := fmt.Sprintf("%s_%d", base, s)
			inbox := nats.NewInbox()
			var acked int64
			credit := make(chan struct{}, window)
			done := make(chan struct{})
			sub, err := nc.Subscribe(inbox, func(m *nats.Msg) {
				if len(m.Data) == 0 || m.Data[len(m.Data)-1] != '}' || len(m.Data) > 60 {
					atomic.AddInt64(&errors, 1)
				}
				<-credit
				if atomic.AddInt64(&acked, 1) == int64(per) {
					close(done)
				}
			})
			must(err)
			sub.SetPendingLimits(-1, -1)
			msg := &nats.Msg{Subject: name + ".x", Reply: inbox, Data: data}
			for i := 1; i <= per; i++ {
				credit <- struct{}{}
				if withHeaders {
					msg.Header = nats.Header{}
					msg.Header.Set("Nats-Expected-Last-Sequence", strconv.Itoa(i-1))
					msg.Header.Set("Stan-Timestamp", strconv.FormatInt(time.Now().UnixNano(), 10))
				}
				must(nc.PublishMsg(msg))
			}
			<-done
			sub.Unsubscribe()
		}(s)
	}
	wg.Wait()
	elapsed := time.Since(start)
	for s := 0; s < streams; s++ {
		js.DeleteStream(fmt.Sprintf("%s_%d", base, s))
	}
	fmt.Printf("{\"scenario\":\"jetstream-r3-pub-go\",\"headers\":%v,\"size\":%d,\"msgs\":%d,\"window\":%d,\"streams\":%d,\"errors\":%d,\"msgs_per_sec\":%d}\n",
		withHeaders, size, per*streams, window, streams, errors, int64(float64(per*streams)/elapsed.Seconds()))
}
