package dev.treadle.client;

import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;

/**
 * An option of {@link Treadle#attach}, {@link Treadle#serveTools} and {@link Treadle#connect}:
 * {@code Treadle.attach(target, processors, Option.token("..."), Option.backoff(...))}.
 */
@FunctionalInterface
public interface Option {
  void apply(Settings settings);

  /** The bearer token sent on every call (default: the {@code TREADLE_TOKEN} environment variable). */
  static Option token(String token) {
    return s -> s.token = token;
  }

  /** TLS to the server (default: plaintext). */
  static Option tls(Tls tls) {
    return s -> s.tls = tls;
  }

  /** The first and the longest wait between reconnects (default 100 ms and 5 s; full jitter). */
  static Option backoff(Duration initial, Duration maximum) {
    if (initial.isZero() || initial.isNegative() || maximum.compareTo(initial) < 0) {
      throw new IllegalArgumentException("backoff must be initial > 0 and maximum >= initial, got "
          + initial + ", " + maximum);
    }
    return s -> {
      s.backoffInitial = initial;
      s.backoffMax = maximum;
    };
  }

  /** The name of this process in the server's logs (default host:pid). */
  static Option instanceId(String id) {
    return s -> s.instanceId = id;
  }

  /** How long a run's state is kept after its last invocation when no run end arrives (default 10 min). */
  static Option stateTtl(Duration ttl) {
    return s -> s.stateTtl = ttl;
  }

  /** Where invocation spans go (default: {@code GlobalOpenTelemetry}). */
  static Option openTelemetry(OpenTelemetry openTelemetry) {
    return s -> s.openTelemetry = openTelemetry;
  }
}
