// The client URLs a server gives its clients in INFO `connect_urls`: its own, then
// those the other servers announced over their routes, counted so that a URL two
// routes announce stays until both are gone (the reference's refCountedUrlSet).

import { networkInterfaces } from 'node:os';
import { joinHostPort } from './options.js';

export class RefCountedUrls {
  private readonly counts = new Map<string, number>();

  /** Adds one reference; true when the URL is new. */
  add(url: string): boolean {
    const n = this.counts.get(url) ?? 0;
    this.counts.set(url, n + 1);
    return n === 0;
  }

  /** Drops one reference; true when the URL is gone. */
  remove(url: string): boolean {
    const n = this.counts.get(url);
    if (n === undefined) return false;
    if (n > 1) {
      this.counts.set(url, n - 1);
      return false;
    }
    this.counts.delete(url);
    return true;
  }

  get size(): number {
    return this.counts.size;
  }

  /** In the order they first came. */
  list(): string[] {
    return [...this.counts.keys()];
  }
}

/**
 * This server's own client URLs, as the reference's getConnectURLs: the advertised
 * `host:port` when there is one; for a wildcard listen address every non-loopback
 * address of the machine; else the listen address.
 */
export function ownConnectUrls(host: string, port: number, advertise: string): string[] {
  if (advertise !== '') {
    const i = advertise.lastIndexOf(':');
    const hasPort = i > 0 && /^\d+$/.test(advertise.substring(i + 1)) && !advertise.endsWith(']');
    if (hasPort) return [advertise];
    return [joinHostPort(advertise.replace(/^\[|\]$/g, ''), port)];
  }
  if (host === '0.0.0.0' || host === '::' || host === '') {
    // Global unicast addresses only: no loopback, no link-local.
    const urls: string[] = [];
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) {
        if (a.internal) continue;
        if (a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80')) continue;
        urls.push(joinHostPort(a.address, port));
      }
    }
    return urls;
  }
  return [joinHostPort(host, port)];
}
