package dev.treadle.client;

import io.grpc.Status;

/** A server refused the handshake (the message says why); the SDK does not retry it. */
public final class AttachException extends Exception {
  private final String target;
  private final Status.Code code;

  AttachException(String target, Status status) {
    super(target + ": " + status.getCode() + ": " + status.getDescription());
    this.target = target;
    this.code = status.getCode();
  }

  public String target() {
    return target;
  }

  public Status.Code code() {
    return code;
  }
}
