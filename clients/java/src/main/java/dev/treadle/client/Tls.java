package dev.treadle.client;

import java.nio.file.Path;

/**
 * TLS to the server: {@code ca} verifies the server (null: the system's roots), {@code cert} and
 * {@code key} are a client certificate for servers that require one (mutual TLS), {@code
 * serverName} is the name the server's certificate must carry when it is not the target's host.
 * All are PEM files.
 */
public record Tls(Path ca, Path cert, Path key, String serverName) {
  public Tls {
    if ((cert == null) != (key == null)) {
      throw new IllegalArgumentException("a client certificate needs both cert and key");
    }
  }

  /** TLS verified against the system's roots. */
  public static Tls system() {
    return new Tls(null, null, null, null);
  }

  /** TLS verified against {@code ca}. */
  public static Tls withCa(Path ca) {
    return new Tls(ca, null, null, null);
  }
}
