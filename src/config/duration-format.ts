// Go's time.Duration String() for the durations we keep in milliseconds: the
// reference prints durations this way in its log lines and errors ("2m0s", "10s",
// "500ms"), so ours read the same.

/** Go's time.Duration String() for a number of milliseconds: "2m0s", "500ms", "1h0m0s". */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) {
    if (rest >= 1) return `${sign}${trimFraction(rest)}ms`;
    if (rest >= 0.001) return `${sign}${trimFraction(rest * 1000)}µs`;
    return `${sign}${Math.round(rest * 1e6)}ns`;
  }
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = `${trimFraction(rest / 1000)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return sign + seconds;
}

function trimFraction(n: number): string {
  return n.toFixed(9).replace(/\.?0+$/, '');
}
