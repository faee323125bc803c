// The official C client (libnats, Debian's libnats-dev) against a JetStream server:
// streams, acked publishing (sync and async), pull and push consumers with acks, and
// the key-value store (the C client has no object store). test/jetstream/
// native-clients.test.ts builds it with `gcc jsclient.c -lnats` and runs it against
// wirebus.
//
//   jsclient <url> <memory|file>
//
// Prints one "ok <step>" line per step; the first failure prints "FAIL <step>: <why>"
// and exits 1.

#include <nats/nats.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 5000

static const char *step = "connect";

static void fail(const char *format, ...)
{
    va_list args;
    printf("FAIL %s: ", step);
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    printf("\n");
    exit(1);
}

// A call that must succeed: its natsStatus, and the JetStream error code if it has one.
#define CHECK(call)                                                              \
    do {                                                                         \
        natsStatus s_ = (call);                                                  \
        if (s_ != NATS_OK)                                                       \
            fail("%s -> %s (jerr %d) %s", #call, natsStatus_GetText(s_), (int)jerr, \
                 nats_GetLastError(NULL));                                       \
    } while (0)

#define EXPECT(cond, ...)                                                        \
    do {                                                                         \
        if (!(cond)) fail(__VA_ARGS__);                                          \
    } while (0)

static void done(void) { printf("ok %s\n", step); fflush(stdout); }

static jsErrCode jerr = 0;

static void streams(jsCtx *js, jsStorageType storage)
{
    jsStreamConfig cfg;
    jsStreamInfo *si = NULL;
    jsPubAck *pa = NULL;
    jsPubOptions po;
    const char *subjects[] = {"orders.>"};
    char subj[32], data[32], id[32];
    int i;

    step = "stream create";
    jsStreamConfig_Init(&cfg);
    cfg.Name = "ORDERS";
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = storage;
    CHECK(js_AddStream(&si, js, &cfg, NULL, &jerr));
    EXPECT(si->Config->Storage == storage && si->State.Msgs == 0, "stream info");
    jsStreamInfo_Destroy(si);
    done();

    step = "publish with PubAck";
    for (i = 1; i <= 10; i++) {
        snprintf(subj, sizeof subj, "orders.%d", i % 3);
        snprintf(data, sizeof data, "order %d", i);
        snprintf(id, sizeof id, "id-%d", i);
        jsPubOptions_Init(&po);
        po.MsgId = id;
        CHECK(js_Publish(&pa, js, subj, data, (int)strlen(data), &po, &jerr));
        EXPECT(strcmp(pa->Stream, "ORDERS") == 0 && pa->Sequence == (uint64_t)i && !pa->Duplicate,
               "ack %s/%llu for message %d", pa->Stream, (unsigned long long)pa->Sequence, i);
        jsPubAck_Destroy(pa);
    }
    jsPubOptions_Init(&po);
    po.MsgId = "id-1";
    CHECK(js_Publish(&pa, js, "orders.1", "again", 5, &po, &jerr));
    EXPECT(pa->Duplicate && pa->Sequence == 1, "duplicate ack %llu",
           (unsigned long long)pa->Sequence);
    jsPubAck_Destroy(pa);
    jsPubOptions_Init(&po);
    po.ExpectLastSeq = 3;
    pa = NULL;
    EXPECT(js_Publish(&pa, js, "orders.1", "x", 1, &po, &jerr) != NATS_OK &&
               jerr == JSStreamWrongLastSequenceErr,
           "expected-last-sequence: jerr %d", (int)jerr);
    jerr = 0;
    done();

    step = "publish async";
    for (i = 11; i <= 110; i++) {
        snprintf(data, sizeof data, "order %d", i);
        CHECK(js_PublishAsync(js, "orders.async", data, (int)strlen(data), NULL));
    }
    jsPubOptions_Init(&po);
    po.MaxWait = WAIT_MS;
    CHECK(js_PublishAsyncComplete(js, &po));
    CHECK(js_GetStreamInfo(&si, js, "ORDERS", NULL, &jerr));
    EXPECT(si->State.Msgs == 110 && si->State.LastSeq == 110, "stream holds %llu",
           (unsigned long long)si->State.Msgs);
    jsStreamInfo_Destroy(si);
    done();

    step = "stream get message";
    {
        natsMsg *m = NULL;
        CHECK(js_GetMsg(&m, js, "ORDERS", 2, NULL, &jerr));
        EXPECT(strcmp(natsMsg_GetSubject(m), "orders.2") == 0 &&
                   strcmp(natsMsg_GetData(m), "order 2") == 0,
               "message 2 is %s", natsMsg_GetSubject(m));
        natsMsg_Destroy(m);
        CHECK(js_GetLastMsg(&m, js, "ORDERS", "orders.0", NULL, &jerr));
        EXPECT(natsMsg_GetSequence(m) == 9, "last on orders.0 is %llu",
               (unsigned long long)natsMsg_GetSequence(m));
        natsMsg_Destroy(m);
    }
    done();
}

static void pull(jsCtx *js)
{
    natsSubscription *sub = NULL;
    jsSubOptions so;
    natsMsgList list;
    jsMsgMetaData *meta = NULL;
    jsConsumerInfo *ci = NULL;
    int seen = 0, i;

    step = "pull fetch and ack";
    jsSubOptions_Init(&so);
    so.Stream = "ORDERS";
    so.Config.AckPolicy = js_AckExplicit;
    CHECK(js_PullSubscribe(&sub, js, "orders.>", "puller", NULL, &so, &jerr));
    while (seen < 110) {
        CHECK(natsSubscription_Fetch(&list, sub, 25, WAIT_MS, &jerr));
        for (i = 0; i < list.Count; i++) {
            seen++;
            CHECK(natsMsg_GetMetaData(&meta, list.Msgs[i]));
            EXPECT(meta->Sequence.Stream == (uint64_t)seen, "fetched %llu as message %d",
                   (unsigned long long)meta->Sequence.Stream, seen);
            jsMsgMetaData_Destroy(meta);
            if (seen % 2 == 0)
                CHECK(natsMsg_AckSync(list.Msgs[i], NULL, &jerr));
            else
                CHECK(natsMsg_Ack(list.Msgs[i], NULL));
        }
        natsMsgList_Destroy(&list);
    }
    CHECK(natsSubscription_GetConsumerInfo(&ci, sub, NULL, &jerr));
    EXPECT(ci->Delivered.Stream == 110 && ci->NumPending == 0, "delivered %llu pending %llu",
           (unsigned long long)ci->Delivered.Stream, (unsigned long long)ci->NumPending);
    jsConsumerInfo_Destroy(ci);
    done();

    step = "pull nak redelivers";
    CHECK(js_Publish(NULL, js, "orders.nak", "retry me", 8, NULL, &jerr));
    CHECK(natsSubscription_Fetch(&list, sub, 1, WAIT_MS, &jerr));
    CHECK(natsMsg_Nak(list.Msgs[0], NULL));
    natsMsgList_Destroy(&list);
    CHECK(natsSubscription_Fetch(&list, sub, 1, WAIT_MS, &jerr));
    CHECK(natsMsg_GetMetaData(&meta, list.Msgs[0]));
    EXPECT(meta->NumDelivered == 2 && meta->Sequence.Stream == 111, "redelivery %llu of %llu",
           (unsigned long long)meta->NumDelivered, (unsigned long long)meta->Sequence.Stream);
    jsMsgMetaData_Destroy(meta);
    CHECK(natsMsg_AckSync(list.Msgs[0], NULL, &jerr));
    natsMsgList_Destroy(&list);
    // Last: a timed-out fetch leaves its pull request on the server until it expires, and
    // a message published meanwhile may go to it rather than to the next fetch.
    EXPECT(natsSubscription_Fetch(&list, sub, 1, 300, &jerr) == NATS_TIMEOUT,
           "fetch on an empty consumer did not time out");
    natsSubscription_Destroy(sub);
    done();
}

static void push(jsCtx *js)
{
    natsSubscription *sub = NULL;
    jsSubOptions so;
    natsMsg *m = NULL;
    jsMsgMetaData *meta = NULL;
    char want[32];
    int i;

    step = "push consumer";
    jsSubOptions_Init(&so);
    so.Config.Durable = "pusher";
    so.Config.AckPolicy = js_AckExplicit;
    so.ManualAck = true;
    CHECK(js_SubscribeSync(&sub, js, "orders.async", NULL, &so, &jerr));
    for (i = 11; i <= 110; i++) {
        CHECK(natsSubscription_NextMsg(&m, sub, WAIT_MS));
        snprintf(want, sizeof want, "order %d", i);
        EXPECT(natsMsg_GetDataLength(m) == (int)strlen(want) &&
                   memcmp(natsMsg_GetData(m), want, strlen(want)) == 0,
               "push got %.*s for %d", natsMsg_GetDataLength(m), natsMsg_GetData(m), i);
        CHECK(natsMsg_GetMetaData(&meta, m));
        EXPECT(strcmp(meta->Stream, "ORDERS") == 0 && strcmp(meta->Consumer, "pusher") == 0,
               "metadata %s/%s", meta->Stream, meta->Consumer);
        jsMsgMetaData_Destroy(meta);
        CHECK(natsMsg_Ack(m, NULL));
        natsMsg_Destroy(m);
    }
    CHECK(js_Publish(NULL, js, "orders.async", "late", 4, NULL, &jerr));
    CHECK(natsSubscription_NextMsg(&m, sub, WAIT_MS));
    EXPECT(natsMsg_GetDataLength(m) == 4 && memcmp(natsMsg_GetData(m), "late", 4) == 0,
           "push missed the new message");
    CHECK(natsMsg_AckSync(m, NULL, &jerr));
    natsMsg_Destroy(m);
    CHECK(natsSubscription_Unsubscribe(sub));
    natsSubscription_Destroy(sub);
    done();

    step = "push queue group";
    jsSubOptions_Init(&so);
    so.Queue = "workers";
    so.Config.AckPolicy = js_AckExplicit;
    CHECK(js_SubscribeSync(&sub, js, "orders.q", NULL, &so, &jerr));
    CHECK(js_Publish(NULL, js, "orders.q", "job", 3, NULL, &jerr));
    CHECK(natsSubscription_NextMsg(&m, sub, WAIT_MS));
    EXPECT(natsMsg_GetDataLength(m) == 3, "queue got %d bytes", natsMsg_GetDataLength(m));
    natsMsg_Destroy(m);
    natsSubscription_Destroy(sub);
    done();
}

static void expectUpdate(kvWatcher *w, kvOperation op, const char *key, const char *value)
{
    kvEntry *e = NULL;
    CHECK(kvWatcher_Next(&e, w, WAIT_MS));
    EXPECT(e != NULL && kvEntry_Operation(e) == op && strcmp(kvEntry_Key(e), key) == 0 &&
               strcmp(kvEntry_ValueString(e), value) == 0,
           "watch saw %d %s=%s, wanted %d %s=%s", e ? (int)kvEntry_Operation(e) : -1,
           e ? kvEntry_Key(e) : "-", e ? kvEntry_ValueString(e) : "-", (int)op, key, value);
    kvEntry_Destroy(e);
}

static void keyValue(jsCtx *js, jsStorageType storage)
{
    kvConfig cfg;
    kvStore *kv = NULL;
    kvWatcher *w = NULL;
    kvEntry *e = NULL;
    kvKeysList keys;
    kvEntryList hist;
    uint64_t rev = 0;

    step = "kv create bucket";
    kvConfig_Init(&cfg);
    cfg.Bucket = "PROFILES";
    cfg.History = 5;
    cfg.StorageType = storage;
    CHECK(js_CreateKeyValue(&kv, js, &cfg));
    done();

    step = "kv watch";
    CHECK(kvStore_Watch(&w, kv, "user.*", NULL));
    CHECK(kvWatcher_Next(&e, w, WAIT_MS));
    EXPECT(e == NULL, "watch on an empty bucket starts with an entry");
    done();

    step = "kv put get";
    CHECK(kvStore_PutString(&rev, kv, "user.ann", "v1"));
    EXPECT(rev == 1, "first revision %llu", (unsigned long long)rev);
    CHECK(kvStore_Get(&e, kv, "user.ann"));
    EXPECT(strcmp(kvEntry_ValueString(e), "v1") == 0 && kvEntry_Revision(e) == 1 &&
               kvEntry_Operation(e) == kvOp_Put,
           "entry %s", kvEntry_ValueString(e));
    kvEntry_Destroy(e);
    EXPECT(kvStore_Get(&e, kv, "user.nobody") == NATS_NOT_FOUND, "missing key found");
    done();

    step = "kv create and update";
    EXPECT(kvStore_CreateString(&rev, kv, "user.ann", "nope") != NATS_OK,
           "create over an existing key succeeded");
    CHECK(kvStore_CreateString(&rev, kv, "user.bob", "b1"));
    EXPECT(rev == 2, "create revision %llu", (unsigned long long)rev);
    CHECK(kvStore_UpdateString(&rev, kv, "user.ann", "v2", 1));
    EXPECT(rev == 3, "update revision %llu", (unsigned long long)rev);
    EXPECT(kvStore_UpdateString(&rev, kv, "user.ann", "stale", 1) != NATS_OK,
           "update with a stale revision succeeded");
    done();

    step = "kv keys history delete";
    CHECK(kvStore_Keys(&keys, kv, NULL));
    EXPECT(keys.Count == 2, "%d keys", keys.Count);
    kvKeysList_Destroy(&keys);
    CHECK(kvStore_History(&hist, kv, "user.ann", NULL));
    EXPECT(hist.Count == 2 && strcmp(kvEntry_ValueString(hist.Entries[0]), "v1") == 0 &&
               strcmp(kvEntry_ValueString(hist.Entries[1]), "v2") == 0,
           "history of %d entries", hist.Count);
    kvEntryList_Destroy(&hist);
    CHECK(kvStore_Delete(kv, "user.bob"));
    EXPECT(kvStore_Get(&e, kv, "user.bob") == NATS_NOT_FOUND, "deleted key found");
    CHECK(kvStore_Keys(&keys, kv, NULL));
    EXPECT(keys.Count == 1 && strcmp(keys.Keys[0], "user.ann") == 0, "%d keys after delete",
           keys.Count);
    kvKeysList_Destroy(&keys);
    CHECK(kvStore_Purge(kv, "user.ann", NULL));
    CHECK(kvStore_Keys(&keys, kv, NULL));
    EXPECT(keys.Count == 0, "%d keys after purge", keys.Count);
    kvKeysList_Destroy(&keys);
    done();

    step = "kv watch updates";
    expectUpdate(w, kvOp_Put, "user.ann", "v1");
    expectUpdate(w, kvOp_Put, "user.bob", "b1");
    expectUpdate(w, kvOp_Put, "user.ann", "v2");
    expectUpdate(w, kvOp_Delete, "user.bob", "");
    expectUpdate(w, kvOp_Purge, "user.ann", "");
    kvWatcher_Destroy(w);
    kvStore_Destroy(kv);
    done();

    step = "kv ttl";
    kvConfig_Init(&cfg);
    cfg.Bucket = "SHORT";
    cfg.TTL = 1000000000; /* nanoseconds: the stream's max_age */
    cfg.StorageType = storage;
    CHECK(js_CreateKeyValue(&kv, js, &cfg));
    {
        kvStatus *sts = NULL;
        int tries = 0;
        CHECK(kvStore_Status(&sts, kv));
        EXPECT(kvStatus_TTL(sts) == 1000000000, "bucket TTL %lld", (long long)kvStatus_TTL(sts));
        kvStatus_Destroy(sts);
        CHECK(kvStore_PutString(&rev, kv, "k", "v"));
        CHECK(kvStore_Get(&e, kv, "k"));
        kvEntry_Destroy(e);
        /* The value goes once it is older than the TTL. */
        while (kvStore_Get(&e, kv, "k") == NATS_OK)
        {
            kvEntry_Destroy(e);
            EXPECT(++tries < 150, "key still there after its TTL");
            nats_Sleep(100);
        }
    }
    kvStore_Destroy(kv);
    done();
}

int main(int argc, char **argv)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsOptions o;
    jsStorageType storage;

    if (argc != 3) {
        fprintf(stderr, "usage: jsclient <url> <memory|file>\n");
        return 2;
    }
    storage = strcmp(argv[2], "file") == 0 ? js_FileStorage : js_MemoryStorage;
    CHECK(natsConnection_ConnectTo(&nc, argv[1]));
    jsOptions_Init(&o);
    o.Wait = WAIT_MS;
    CHECK(natsConnection_JetStream(&js, nc, &o));
    done();

    streams(js, storage);
    pull(js);
    push(js);
    keyValue(js, storage);

    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    nats_Close();
    return 0;
}
