// The part of a NATS client's API the scenarios use, written as interfaces that the
// real packages' own types satisfy as they are: a test file hands its client's
// `connect`, `headers` and error checks to the scenarios, and every call the
// scenarios make goes to the real client, which talks to a real wirebus.
//
// The interfaces are generic in the header type because each client only accepts
// its own MsgHdrs class back in publish, request and respond.

export type Payload = string | Uint8Array;

/** The header methods both clients share (their `Match` argument left out). */
export interface Hdrs {
  readonly hasError: boolean;
  readonly code: number;
  readonly status: string;
  get(k: string): string;
  set(k: string, v: string): void;
  append(k: string, v: string): void;
  has(k: string): boolean;
  keys(): string[];
  values(k: string): string[];
}

export interface Msg<H extends Hdrs> {
  readonly subject: string;
  readonly reply?: string | undefined;
  readonly data: Uint8Array;
  readonly headers?: H | undefined;
  string(): string;
  respond(payload?: Payload, opts?: { headers?: H }): boolean;
}

export interface Sub<H extends Hdrs> extends AsyncIterable<Msg<H>> {
  readonly closed: Promise<unknown>;
  unsubscribe(max?: number): void;
  drain(): Promise<void>;
  isClosed(): boolean;
  getProcessed(): number;
  getSubject(): string;
}

export interface Info {
  readonly server_id: string;
  readonly server_name: string;
  readonly version: string;
  readonly proto: number;
  readonly host: string;
  readonly port: number;
  readonly headers?: boolean | undefined;
  readonly max_payload: number;
  readonly client_id: number;
  readonly client_ip?: string | undefined;
}

export interface Conn<H extends Hdrs> {
  readonly info?: Info | undefined;
  publish(subject: string, payload?: Payload, opts?: { reply?: string; headers?: H }): void;
  subscribe(subject: string, opts?: { queue?: string; max?: number }): Sub<H>;
  request(
    subject: string,
    payload?: Payload,
    opts?: { timeout: number; headers?: H; noMux?: boolean },
  ): Promise<Msg<H>>;
  flush(): Promise<void>;
  rtt(): Promise<number>;
  drain(): Promise<void>;
  close(): Promise<void>;
  /** Resolves (never rejects) once closed, to the error that closed it if any. */
  closed(): Promise<unknown>;
  isClosed(): boolean;
  status(): AsyncIterable<{ readonly type: string }>;
}

/** Options of `connect` under the names both clients use. */
export interface ConnectOptions {
  servers: string;
  /** Milliseconds the first connection attempt may take. */
  timeout?: number;
  name?: string;
  noEcho?: boolean;
  verbose?: boolean;
  pedantic?: boolean;
  reconnect?: boolean;
  maxReconnectAttempts?: number;
  reconnectTimeWait?: number;
  reconnectJitter?: number;
}

export interface ClientAdapter<H extends Hdrs> {
  /** Package and major version, for test names. */
  readonly name: string;
  connect(opts: ConnectOptions): Promise<Conn<H>>;
  headers(): H;
  /** The error a request fails with when the server answers 503 no responders. */
  isNoResponders(err: unknown): boolean;
  /** The error publish throws for a payload above the server's max_payload. */
  isMaxPayload(err: unknown): boolean;
  /**
   * What the client reports for an asynchronous `-ERR` in a status event, or
   * undefined when the event is not one: v3 gives the server's text, v2 only its
   * own error code.
   */
  serverError(status: { readonly type: string }): string | undefined;
  /** What serverError gives for `-ERR '<text>'`. */
  reported(text: string): string;
}
