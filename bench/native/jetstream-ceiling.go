// The ceiling of clustered streaming's publish path, measured with the official Go
// client (nats.go, Debian's golang-github-nats-io-go-nats-dev) instead of Node: one
// publisher putting N messages into a fresh three-replica stream, its replies on one
// inbox, at most -window unacknowledged. It tells whether the Node publisher
// (dist/bench/jetstream-ceiling.js) or nats-server's R3 stream is the limit, and
// what each header and stream option the clustered Leader uses costs nats-server:
// with -pids it reads the CPU the given processes (the nats-servers) spent during
// the run from /proc and prints it per message.
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go build -o /tmp/js-ceiling bench/native/jetstream-ceiling.go
//	/tmp/js-ceiling -urls nats://127.0.0.1:4222,... -n 100000 -size 128 \
//	    -headers leader -storage file -at leader -pids 123,124,125
//
// -headers: none, els (Nats-Expected-Last-Sequence only), ts (Stan-Timestamp only),
// leader (both, what the Leader sends), msgid (both and a Nats-Msg-Id).
// -at: any (the first URL that answers), leader (the stream's raft leader's server),
// follower (another server): where the publisher connects.
// Prints one JSON line.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// cpuTicks sums utime + stime (clock ticks) of the given processes.
func cpuTicks(pids []string) int64 {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		must(err)
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		k, _ := strconv.ParseInt(fields[12], 10, 64)
		sum += u + k
	}
	return sum
}

func main() {
	urls := flag.String("urls", "nats://127.0.0.1:4222", "comma-separated server URLs")
	n := flag.Int("n", 100000, "messages")
	size := flag.Int("size", 128, "payload bytes")
	window := flag.Int("window", 16384, "unacknowledged publishes at most")
	hdrs := flag.String("headers", "leader", "none|els|ts|leader|msgid")
	storage := flag.String("storage", "file", "file|memory")
	dup := flag.Duration("dup", time.Second, "duplicate window")
	direct := flag.Bool("direct", true, "allow_direct")
	perSubject := flag.Int64("per-subject", 0, "max_msgs_per_subject (0: unlimited)")
	discardNew := flag.Bool("discard-new", false, "discard new instead of old")
	wildcard := flag.Bool("wildcard", false, "the stream's subject is <name>.> instead of <name>.x")
	at := flag.String("at", "any", "any|leader|follower")
	streams := flag.Int("streams", 1, "spread the messages over this many streams")
	pidList := flag.String("pids", "", "comma-separated pids whose CPU to report")
	flag.Parse()

	nc, err := nats.Connect(*urls)
	must(err)
	defer nc.Close()
	js, err := nc.JetStream()
	must(err)
	st := nats.FileStorage
	if *storage == "memory" {
		st = nats.MemoryStorage
	}
	discard := nats.DiscardOld
	if *discardNew {
		discard = nats.DiscardNew
	}
	base := fmt.Sprintf("GCEIL_%d", time.Now().UnixNano())
	leaders := make([]string, *streams)
	for s := 0; s < *streams; s++ {
		name := fmt.Sprintf("%s_%d", base, s)
		subject := name + ".x"
		if *wildcard {
			subject = name + ".>"
		}
		info, err := js.AddStream(&nats.StreamConfig{
			Name: name, Subjects: []string{subject}, Replicas: 3, Storage: st,
			Duplicates: *dup, AllowDirect: *direct, MaxMsgsPerSubject: *perSubject, Discard: discard,
		})
		must(err)
		for i := 0; i < 50 && (info.Cluster == nil || info.Cluster.Leader == ""); i++ {
			time.Sleep(100 * time.Millisecond)
			info, err = js.StreamInfo(name)
			must(err)
		}
		leaders[s] = info.Cluster.Leader
	}
	// The publishing connection: any server, or the first stream's leader's, or another.
	pub := nc
	if *at != "any" {
		pub = nil
		for _, u := range strings.Split(*urls, ",") {
			c, err := nats.Connect(u, nats.DontRandomize(), nats.NoReconnect())
			must(err)
			if (c.ConnectedServerName() == leaders[0]) == (*at == "leader") {
				pub = c
				break
			}
			c.Close()
		}
		if pub == nil {
			must(fmt.Errorf("no server is %s of the stream", *at))
		}
		defer pub.Close()
	}
	var pids []string
	if *pidList != "" {
		pids = strings.Split(*pidList, ",")
	}
	data := make([]byte, *size)
	per := *n / *streams
	var wg sync.WaitGroup
	var errors int64
	var ticks0 int64
	if pids != nil {
		ticks0 = cpuTicks(pids)
	}
	start := time.Now()
	for s := 0; s < *streams; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			name := fmt.Sprintf("%s_%d", base, s)
			inbox := nats.NewInbox()
			var acked int64
			credit := make(chan struct{}, *window)
			done := make(chan struct{})
			sub, err := pub.Subscribe(inbox, func(m *nats.Msg) {
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
				if *hdrs != "none" {
					msg.Header = nats.Header{}
					if *hdrs != "ts" {
						msg.Header.Set("Nats-Expected-Last-Sequence", strconv.Itoa(i-1))
					}
					if *hdrs != "els" {
						msg.Header.Set("Stan-Timestamp", strconv.FormatInt(time.Now().UnixNano(), 10))
					}
					if *hdrs == "msgid" {
						msg.Header.Set("Nats-Msg-Id", name+":"+strconv.Itoa(i))
					}
				}
				must(pub.PublishMsg(msg))
			}
			<-done
			sub.Unsubscribe()
		}(s)
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuUs := 0.0
	if pids != nil {
		cpuUs = float64(cpuTicks(pids)-ticks0) * 1e4 / float64(per**streams)
	}
	for s := 0; s < *streams; s++ {
		js.DeleteStream(fmt.Sprintf("%s_%d", base, s))
	}
	fmt.Printf("{\"scenario\":\"jetstream-r3-pub-go\",\"headers\":%q,\"storage\":%q,\"at\":%q,\"dup\":%q,\"direct\":%v,\"wildcard\":%v,\"size\":%d,\"msgs\":%d,\"window\":%d,\"streams\":%d,\"errors\":%d,\"msgs_per_sec\":%d,\"servers_cpu_us_per_msg\":%.1f}\n",
		*hdrs, *storage, *at, dup.String(), *direct, *wildcard, *size, per**streams, *window, *streams, errors,
		int64(float64(per**streams)/elapsed.Seconds()), cpuUs)
}
