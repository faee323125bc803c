// The API's errors, as nats-server 2.9 writes them: `{"code","err_code","description"}`.
// Codes, numbers and texts come from the reference's errors.json; only those the engine
// can produce are listed.

export interface ApiError {
  code: number;
  err_code: number;
  description: string;
}

const e = (code: number, errCode: number, description: string): ApiError => ({
  code,
  err_code: errCode,
  description,
});

export const JsErr = {
  badRequest: () => e(400, 10003, 'bad request'),
  invalidJson: () => e(400, 10025, 'invalid JSON'),
  notEmptyRequest: () => e(400, 10038, 'expected an empty request payload'),
  notEnabledForAccount: () => e(503, 10039, 'JetStream not enabled for account'),
  streamNotFound: () => e(404, 10059, 'stream not found'),
  streamMismatch: () => e(400, 10056, 'stream name in subject does not match request'),
  streamNameExist: () => e(400, 10058, 'stream name already in use with a different configuration'),
  streamSubjectOverlap: () => e(400, 10065, 'subjects overlap with an existing stream'),
  streamInvalidConfig: (err: string) => e(500, 10052, err),
  streamCreate: (err: string) => e(500, 10049, err),
  streamUpdate: (err: string) => e(500, 10069, err),
  streamDelete: (err: string) => e(500, 10050, err),
  streamTemplateCreate: (err: string) => e(500, 10066, err),
  streamTemplateDelete: (err: string) => e(500, 10067, err),
  streamTemplateNotFound: () => e(404, 10068, 'template not found'),
  templateNameNotMatchSubject: () =>
    e(400, 10073, 'template name in subject does not match request'),
  streamMaxBytesRequired: () =>
    e(400, 10113, 'account requires a stream config to have max bytes set'),
  streamMaxStreamBytesExceeded: () =>
    e(400, 10122, 'stream max bytes exceeds account limit max stream bytes'),
  consumerMaxPendingAckExcess: (limit: number) =>
    e(400, 10121, `consumer max ack pending exceeds system limit of ${limit}`),
  streamPathSeparators: () => e(400, 10128, 'Stream name can not contain path separators'),
  streamSealed: () => e(400, 10109, 'invalid operation on sealed stream'),
  streamMsgDeleteFailed: (err: string) => e(500, 10057, err),
  streamNameExistRestoreFailed: () => e(400, 10130, 'stream name already in use, cannot restore'),
  streamRestore: (err: string) => e(500, 10062, `restore failed: ${err}`),
  streamSnapshot: (err: string) => e(500, 10064, `snapshot failed: ${err}`),
  snapshotDeliverSubjectInvalid: () => e(400, 10015, 'deliver subject not valid'),
  streamPurgeFailed: (err: string) => e(500, 10110, err),
  streamRollupFailed: (err: string) => e(500, 10111, err),
  streamStoreFailed: (err: string) => e(503, 10077, err),
  streamNotMatch: () => e(400, 10060, 'expected stream does not match'),
  streamWrongLastSequence: (seq: number) => e(400, 10071, `wrong last sequence: ${seq}`),
  streamWrongLastMsgId: (id: string) => e(400, 10070, `wrong last msg ID: ${id}`),
  streamMessageExceedsMaximum: () => e(400, 10054, 'message size exceeds maximum allowed'),
  streamHeaderExceedsMaximum: () => e(400, 10097, 'header size exceeds maximum allowed of 64k'),
  streamReplicasNotSupported: () =>
    e(500, 10074, 'replicas > 1 not supported in non-clustered mode'),
  streamReplicasNotUpdatable: () => e(400, 10061, 'Replicas configuration can not be updated'),
  streamMirrorNotUpdatable: () => e(400, 10055, 'stream mirror configuration can not be updated'),
  replicasNegative: () => e(400, 10133, 'replicas count cannot be negative'),
  maximumStreams: () => e(400, 10027, 'maximum number of streams reached'),
  maximumConsumers: () => e(400, 10026, 'maximum consumers limit reached'),
  noMessageFound: () => e(404, 10037, 'no message found'),
  sequenceNotFound: (seq: number) => e(400, 10043, `sequence ${seq} not found`),
  insufficientResources: () => e(503, 10023, 'insufficient resources'),
  accountResourcesExceeded: () => e(400, 10002, 'resource limits exceeded for account'),
  memoryResourcesExceeded: () => e(500, 10028, 'insufficient memory resources available'),
  storageResourcesExceeded: () => e(500, 10047, 'insufficient storage resources available'),
  clusterRequired: () => e(503, 10010, 'JetStream clustering support required'),
  clusterNotActive: () => e(500, 10006, 'JetStream not in clustered mode'),

  consumerNotFound: () => e(404, 10014, 'consumer not found'),
  consumerCreate: (err: string) => e(500, 10012, err),
  consumerConfigRequired: () => e(400, 10078, 'consumer config required'),
  consumerNameExist: () => e(400, 10013, 'consumer name already in use'),
  consumerExistingActive: () => e(400, 10105, 'consumer already exists and is still active'),
  consumerReplacementWithDifferentName: () =>
    e(400, 10106, 'consumer replacement durable config not the same'),
  consumerEphemeralWithDurableInSubject: () =>
    e(400, 10019, 'consumer expected to be ephemeral but detected a durable name set in subject'),
  consumerEphemeralWithDurableName: () =>
    e(400, 10020, 'consumer expected to be ephemeral but a durable name was set in request'),
  consumerDurableNameNotInSubject: () =>
    e(400, 10016, 'consumer expected to be durable but no durable name set in subject'),
  consumerDurableNameNotMatchSubject: () =>
    e(400, 10017, 'consumer name in subject does not match durable name in request'),
  consumerDurableNameNotSet: () =>
    e(400, 10018, 'consumer expected to be durable but a durable name was not set'),
  consumerBadDurableName: () => e(400, 10103, "durable name can not contain '.', '*', '>'"),
  consumerNameTooLong: (max: number) =>
    e(400, 10102, `consumer name is too long, maximum allowed is ${max}`),
  consumerDescriptionTooLong: (max: number) =>
    e(400, 10107, `consumer description is too long, maximum allowed is ${max}`),
  consumerPathSeparators: () => e(400, 10127, 'Consumer name can not contain path separators'),
  consumerDeliverToWildcards: () => e(400, 10079, 'consumer deliver subject has wildcards'),
  consumerInvalidDeliverSubject: () => e(400, 10112, 'invalid push consumer deliver subject'),
  consumerDeliverCycle: () => e(400, 10081, 'consumer deliver subject forms a cycle'),
  consumerPushMaxWaiting: () => e(400, 10080, 'consumer in push mode can not set max waiting'),
  consumerMaxPendingAckPolicyRequired: () =>
    e(400, 10082, 'consumer requires ack policy for max ack pending'),
  consumerSmallHeartbeat: () => e(400, 10083, 'consumer idle heartbeat needs to be >= 100ms'),
  consumerPullRequiresAck: () => e(400, 10084, 'consumer in pull mode requires ack policy'),
  consumerPullWithRateLimit: () =>
    e(400, 10086, 'consumer in pull mode can not have rate limit set'),
  consumerMaxWaitingNegative: () => e(400, 10087, 'consumer max waiting needs to be positive'),
  consumerHbRequiresPush: () =>
    e(400, 10088, 'consumer idle heartbeat requires a push based consumer'),
  consumerFcRequiresPush: () =>
    e(400, 10089, 'consumer flow control requires a push based consumer'),
  consumerDirectRequiresPush: () => e(400, 10090, 'consumer direct requires a push based consumer'),
  consumerDirectRequiresEphemeral: () =>
    e(400, 10091, 'consumer direct requires an ephemeral consumer'),
  consumerFilterNotSubset: () =>
    e(400, 10093, 'consumer filter subject is not a valid subset of the interest subjects'),
  consumerInvalidPolicy: (err: string) => e(400, 10094, err),
  consumerInvalidSampling: (err: string) =>
    e(400, 10095, `failed to parse consumer sampling configuration: ${err}`),
  consumerWqRequiresExplicitAck: () => e(400, 10098, 'workqueue stream requires explicit ack'),
  consumerWqMultipleUnfiltered: () =>
    e(400, 10099, 'multiple non-filtered consumers not allowed on workqueue stream'),
  consumerWqNotUnique: () => e(400, 10100, 'filtered consumer not unique on workqueue stream'),
  consumerWqNotDeliverAll: () => e(400, 10101, 'consumer must be deliver all on workqueue stream'),
  consumerWithFlowControlNeedsHeartbeats: () =>
    e(400, 10108, 'consumer with flow control also needs heartbeats'),
  consumerMaxRequestBatchNegative: () =>
    e(400, 10114, 'consumer max request batch needs to be > 0'),
  consumerMaxRequestExpiresTooSmall: () =>
    e(400, 10115, 'consumer max request expires needs to be >= 1ms'),
  consumerMaxDeliverBackoff: () =>
    e(400, 10116, 'max deliver is required to be > length of backoff values'),
  consumerReplicasExceedsStream: () =>
    e(400, 10126, 'consumer config replica count exceeds parent stream'),
  consumerCreateFilterSubjectMismatch: () =>
    e(400, 10131, 'Consumer create request did not match filtered subject from create subject'),
  consumerCreateDurableAndNameMismatch: () =>
    e(400, 10132, 'Consumer Durable and Name have to be equal if both are provided'),
} as const;
