// The official Go client (nats.go, Debian's golang-github-nats-io-go-nats-dev) against a
// JetStream server: streams, acked publishing, pull and push consumers, key-value and
// object stores, as a Go program uses them. test/jetstream/native-clients.test.ts builds
// it (GOPATH=/usr/share/gocode GO111MODULE=off, no network) and runs it against wirebus.
//
//	jsclient <url> <memory|file>
//
// Prints one "ok <step>" line per step; the first failure prints "FAIL <step>: <why>"
// and exits 1.
package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

const wait = 5 * time.Second

var step = "connect"

func check(err error) {
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", step, err)
		os.Exit(1)
	}
}

func expect(cond bool, format string, args ...interface{}) {
	if !cond {
		check(fmt.Errorf(format, args...))
	}
}

func done() { fmt.Printf("ok %s\n", step) }

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: jsclient <url> <memory|file>")
		os.Exit(2)
	}
	storage := nats.MemoryStorage
	if os.Args[2] == "file" {
		storage = nats.FileStorage
	}
	nc, err := nats.Connect(os.Args[1], nats.Timeout(wait))
	check(err)
	defer nc.Close()
	js, err := nc.JetStream(nats.MaxWait(wait))
	check(err)
	done()

	streams(js, storage)
	pull(js)
	push(js)
	keyValue(js, storage)
	objects(js, storage)
}

func streams(js nats.JetStreamContext, storage nats.StorageType) {
	step = "stream create"
	info, err := js.AddStream(&nats.StreamConfig{
		Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: storage,
		Duplicates: time.Minute,
	})
	check(err)
	expect(info.Config.Storage == storage, "storage %v", info.Config.Storage)
	expect(info.State.Msgs == 0, "new stream holds %d messages", info.State.Msgs)
	done()

	step = "publish with PubAck"
	for i := 1; i <= 10; i++ {
		ack, err := js.Publish(fmt.Sprintf("orders.%d", i%3), []byte(fmt.Sprintf("order %d", i)),
			nats.MsgId(fmt.Sprintf("id-%d", i)))
		check(err)
		expect(ack.Stream == "ORDERS" && ack.Sequence == uint64(i) && !ack.Duplicate,
			"ack %+v for message %d", ack, i)
	}
	dup, err := js.Publish("orders.1", []byte("again"), nats.MsgId("id-1"))
	check(err)
	expect(dup.Duplicate && dup.Sequence == 1, "duplicate ack %+v", dup)
	_, err = js.Publish("orders.1", []byte("x"), nats.ExpectLastSequence(3))
	expect(err != nil && strings.Contains(err.Error(), "wrong last sequence: 10"),
		"expected-last-sequence error: %v", err)
	done()

	step = "publish async"
	for i := 11; i <= 110; i++ {
		_, err := js.PublishAsync("orders.async", []byte(fmt.Sprintf("order %d", i)))
		check(err)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(wait):
		check(errors.New("async acks did not all arrive"))
	}
	info, err = js.StreamInfo("ORDERS")
	check(err)
	expect(info.State.Msgs == 110 && info.State.LastSeq == 110, "state %+v", info.State)
	done()

	step = "stream get message"
	msg, err := js.GetMsg("ORDERS", 2)
	check(err)
	expect(msg.Subject == "orders.2" && string(msg.Data) == "order 2", "message 2: %s %q",
		msg.Subject, msg.Data)
	last, err := js.GetLastMsg("ORDERS", "orders.0")
	check(err)
	expect(last.Sequence == 9, "last on orders.0 is %d", last.Sequence)
	done()
}

func pull(js nats.JetStreamContext) {
	step = "pull fetch and ack"
	sub, err := js.PullSubscribe("orders.>", "puller", nats.BindStream("ORDERS"),
		nats.AckExplicit())
	check(err)
	seen := 0
	for seen < 110 {
		msgs, err := sub.Fetch(25, nats.MaxWait(wait))
		check(err)
		for _, m := range msgs {
			seen++
			meta, err := m.Metadata()
			check(err)
			expect(meta.Sequence.Stream == uint64(seen), "fetched %d as message %d",
				meta.Sequence.Stream, seen)
			if seen%2 == 0 {
				check(m.AckSync())
			} else {
				check(m.Ack())
			}
		}
	}
	ci, err := sub.ConsumerInfo()
	check(err)
	expect(ci.Delivered.Stream == 110 && ci.NumPending == 0, "consumer %+v", ci)
	deadline := time.Now().Add(wait)
	for ci.NumAckPending != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		ci, err = sub.ConsumerInfo()
		check(err)
	}
	expect(ci.AckFloor.Stream == 110 && ci.NumAckPending == 0, "ack floor %+v pending %d",
		ci.AckFloor, ci.NumAckPending)
	done()

	step = "pull nak redelivers"
	_, err = js.Publish("orders.nak", []byte("retry me"))
	check(err)
	msgs, err := sub.Fetch(1, nats.MaxWait(wait))
	check(err)
	check(msgs[0].Nak())
	msgs, err = sub.Fetch(1, nats.MaxWait(wait))
	check(err)
	meta, err := msgs[0].Metadata()
	check(err)
	expect(meta.NumDelivered == 2 && meta.Sequence.Stream == 111, "redelivery %+v", meta)
	check(msgs[0].AckSync())
	// Last: a timed-out fetch leaves its pull request on the server until it expires, and
	// a message published meanwhile may go to it rather than to the next fetch.
	_, err = sub.Fetch(1, nats.MaxWait(300*time.Millisecond))
	expect(errors.Is(err, nats.ErrTimeout), "fetch on an empty consumer: %v", err)
	done()
}

func push(js nats.JetStreamContext) {
	step = "push consumer"
	got := make(chan *nats.Msg, 200)
	sub, err := js.Subscribe("orders.async", func(m *nats.Msg) { got <- m },
		nats.Durable("pusher"), nats.ManualAck(), nats.AckExplicit(), nats.DeliverAll())
	check(err)
	for i := 11; i <= 110; i++ {
		select {
		case m := <-got:
			expect(string(m.Data) == fmt.Sprintf("order %d", i), "push got %q for %d", m.Data, i)
			meta, err := m.Metadata()
			check(err)
			expect(meta.Stream == "ORDERS" && meta.Consumer == "pusher", "metadata %+v", meta)
			check(m.Ack())
		case <-time.After(wait):
			check(fmt.Errorf("push consumer stopped before message %d", i))
		}
	}
	_, err = js.Publish("orders.async", []byte("late"))
	check(err)
	select {
	case m := <-got:
		expect(string(m.Data) == "late", "push got %q", m.Data)
		check(m.AckSync())
	case <-time.After(wait):
		check(errors.New("push consumer missed a new message"))
	}
	check(sub.Unsubscribe())
	done()

	step = "push queue group"
	qgot := make(chan *nats.Msg, 10)
	qsub, err := js.QueueSubscribe("orders.q", "workers", func(m *nats.Msg) { qgot <- m },
		nats.Durable("workers"), nats.AckExplicit())
	check(err)
	_, err = js.Publish("orders.q", []byte("job"))
	check(err)
	select {
	case m := <-qgot:
		expect(string(m.Data) == "job", "queue got %q", m.Data)
	case <-time.After(wait):
		check(errors.New("queue subscriber got nothing"))
	}
	check(qsub.Unsubscribe())
	done()
}

var opNames = map[nats.KeyValueOp]string{
	nats.KeyValuePut: "PUT", nats.KeyValueDelete: "DEL", nats.KeyValuePurge: "PURGE",
}

func keyValue(js nats.JetStreamContext, storage nats.StorageType) {
	step = "kv create bucket"
	kv, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "PROFILES", History: 5,
		Storage: storage})
	check(err)
	done()

	step = "kv watch"
	watcher, err := kv.Watch("user.*")
	check(err)
	initial := <-watcher.Updates()
	expect(initial == nil, "watch on an empty bucket starts with %v", initial)
	done()

	step = "kv put get"
	rev, err := kv.Put("user.ann", []byte("v1"))
	check(err)
	expect(rev == 1, "first revision %d", rev)
	e, err := kv.Get("user.ann")
	check(err)
	expect(string(e.Value()) == "v1" && e.Revision() == 1 && e.Operation() == nats.KeyValuePut,
		"entry %q rev %d op %v", e.Value(), e.Revision(), e.Operation())
	_, err = kv.Get("user.nobody")
	expect(errors.Is(err, nats.ErrKeyNotFound), "missing key: %v", err)
	done()

	step = "kv create and update"
	_, err = kv.Create("user.ann", []byte("nope"))
	expect(err != nil, "create over an existing key succeeded")
	rev, err = kv.Create("user.bob", []byte("b1"))
	check(err)
	expect(rev == 2, "create revision %d", rev)
	rev, err = kv.Update("user.ann", []byte("v2"), 1)
	check(err)
	expect(rev == 3, "update revision %d", rev)
	_, err = kv.Update("user.ann", []byte("stale"), 1)
	expect(err != nil && strings.Contains(err.Error(), "wrong last sequence"),
		"update with a stale revision: %v", err)
	done()

	step = "kv keys history delete"
	keys, err := kv.Keys()
	check(err)
	sort.Strings(keys)
	expect(strings.Join(keys, ",") == "user.ann,user.bob", "keys %v", keys)
	hist, err := kv.History("user.ann")
	check(err)
	expect(len(hist) == 2 && string(hist[0].Value()) == "v1" && string(hist[1].Value()) == "v2",
		"history of %d entries", len(hist))
	check(kv.Delete("user.bob"))
	_, err = kv.Get("user.bob")
	expect(errors.Is(err, nats.ErrKeyNotFound), "deleted key: %v", err)
	keys, err = kv.Keys()
	check(err)
	expect(len(keys) == 1 && keys[0] == "user.ann", "keys after delete %v", keys)
	check(kv.Purge("user.ann"))
	_, err = kv.Keys()
	expect(errors.Is(err, nats.ErrNoKeysFound), "keys after purge: %v", err)
	done()

	step = "kv watch updates"
	want := []string{"PUT user.ann=v1", "PUT user.bob=b1", "PUT user.ann=v2", "DEL user.bob=",
		"PURGE user.ann="}
	for _, w := range want {
		select {
		case u := <-watcher.Updates():
			got := fmt.Sprintf("%s %s=%s", opNames[u.Operation()], u.Key(), u.Value())
			expect(got == w, "watch saw %q, wanted %q", got, w)
		case <-time.After(wait):
			check(fmt.Errorf("watch missed %q", w))
		}
	}
	check(watcher.Stop())
	done()

	step = "kv ttl"
	short, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "SHORT", TTL: time.Second,
		Storage: storage})
	check(err)
	status, err := short.Status()
	check(err)
	expect(status.TTL() == time.Second, "bucket TTL %v", status.TTL())
	_, err = short.Put("k", []byte("v"))
	check(err)
	_, err = short.Get("k")
	check(err)
	// The value goes once it is older than the TTL (the stream's max_age).
	for deadline := time.Now().Add(3 * wait); ; time.Sleep(100 * time.Millisecond) {
		_, err = short.Get("k")
		if errors.Is(err, nats.ErrKeyNotFound) {
			break
		}
		expect(time.Now().Before(deadline), "key still there after its TTL: %v", err)
	}
	done()
}

func objects(js nats.JetStreamContext, storage nats.StorageType) {
	step = "object store create"
	obs, err := js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: "FILES", Storage: storage})
	check(err)
	done()

	step = "object put get 5 MB"
	big := make([]byte, 5*1024*1024+123)
	for i := range big {
		big[i] = byte(i*7 + i>>11)
	}
	info, err := obs.PutBytes("big.bin", big)
	check(err)
	sum := sha256.Sum256(big)
	expect(info.Size == uint64(len(big)) && info.Chunks > 1, "info %+v", info)
	back, err := obs.GetBytes("big.bin")
	check(err)
	expect(bytes.Equal(back, big), "read back %d bytes, sha256 %x vs %x", len(back),
		sha256.Sum256(back), sum)
	done()

	step = "object info list link delete"
	_, err = obs.PutString("small.txt", "hello")
	check(err)
	got, err := obs.GetInfo("big.bin")
	check(err)
	expect(got.Size == uint64(len(big)) && got.NUID == info.NUID, "GetInfo %+v", got)
	_, err = obs.AddLink("alias", got)
	check(err)
	viaLink, err := obs.GetBytes("alias")
	check(err)
	expect(bytes.Equal(viaLink, big), "link read %d bytes", len(viaLink))
	list, err := obs.List()
	check(err)
	names := []string{}
	for _, o := range list {
		names = append(names, o.Name)
	}
	sort.Strings(names)
	expect(strings.Join(names, ",") == "alias,big.bin,small.txt", "list %v", names)
	check(obs.Delete("big.bin"))
	_, err = obs.Get("big.bin")
	expect(errors.Is(err, nats.ErrObjectNotFound), "deleted object: %v", err)
	s, err := obs.GetString("small.txt")
	check(err)
	expect(s == "hello", "small object %q", s)
	done()
}
