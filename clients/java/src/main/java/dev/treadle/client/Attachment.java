package dev.treadle.client;

import java.time.Duration;

/**
 * Processors or tools attached to one server over one long-lived stream, reopened when it ends.
 * {@link #close()} detaches (in-flight invocations are cancelled); use it in try-with-resources.
 */
public interface Attachment extends AutoCloseable {
  /**
   * Waits for the server's first welcome. Throws {@link AttachException} when the server refused
   * the handshake (it is not retried), {@link IllegalStateException} on timeout.
   */
  void awaitReady(Duration timeout) throws AttachException, InterruptedException;

  /** True while a welcomed stream is open. */
  boolean isAttached();

  /** How many streams were opened so far (reconnects included). */
  int streamsOpened();

  /** The server's address. */
  String target();

  /** The refusal that ended the attachment, or null. */
  AttachException error();

  @Override
  void close();
}
