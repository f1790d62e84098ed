package dev.treadle.client;

import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.TlsChannelCredentials;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;

/** What {@link Option}s set; shared by the processor, tool and agent clients. */
public final class Settings {
  static final String TOKEN_ENV = "TREADLE_TOKEN";
  static final int MAX_MESSAGE_BYTES = 16 << 20;

  String token;
  Tls tls;
  Duration backoffInitial = Duration.ofMillis(100);
  Duration backoffMax = Duration.ofSeconds(5);
  String instanceId;
  Duration stateTtl = Duration.ofMinutes(10);
  OpenTelemetry openTelemetry;

  Settings() {}

  static Settings of(Option... options) {
    Settings s = new Settings();
    for (Option o : options) {
      o.apply(s);
    }
    return s;
  }

  static Settings of(List<Option> options) {
    return of(options.toArray(Option[]::new));
  }

  String instanceId() {
    if (instanceId != null) {
      return instanceId;
    }
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "localhost";
    }
    return host + ":" + ProcessHandle.current().pid();
  }

  OpenTelemetry openTelemetry() {
    return openTelemetry != null ? openTelemetry : GlobalOpenTelemetry.get();
  }

  String resolvedToken() {
    String t = token != null ? token : System.getenv(TOKEN_ENV);
    return t == null || t.isEmpty() ? null : t;
  }

  /** A channel to {@code target} with TLS (when set) and the bearer token on every call. */
  ManagedChannel channel(String target) {
    ChannelCredentials creds;
    if (tls == null) {
      creds = InsecureChannelCredentials.create();
    } else {
      try {
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
        if (tls.ca() != null) {
          b.trustManager(tls.ca().toFile());
        }
        if (tls.cert() != null) {
          b.keyManager(tls.cert().toFile(), tls.key().toFile());
        }
        creds = b.build();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    String t = resolvedToken();
    if (t != null) {
      creds = io.grpc.CompositeChannelCredentials.create(creds, bearer(t));
    }
    // Callbacks run on the transport's thread: the SDK only hands messages to its own threads
    // there (hooks never run on it), which saves a thread hop per message.
    ManagedChannelBuilder<?> b = Grpc.newChannelBuilder(target, creds).directExecutor()
        .maxInboundMessageSize(MAX_MESSAGE_BYTES);
    if (tls != null && tls.serverName() != null) {
      b.overrideAuthority(tls.serverName());
    }
    return b.build();
  }

  private static CallCredentials bearer(String token) {
    Metadata.Key<String> key = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    return new CallCredentials() {
      @Override
      public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        Metadata m = new Metadata();
        m.put(key, "Bearer " + token);
        applier.apply(m);
      }
    };
  }
}
