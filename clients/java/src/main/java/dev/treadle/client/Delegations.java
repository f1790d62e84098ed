package dev.treadle.client;

import dev.treadle.v1.DelegationCompleteOutcome;
import dev.treadle.v1.DelegationStartOutcome;

/** Answers of the delegation hooks. */
public final class Delegations {
  private Delegations() {}

  /** {@code onDelegationStart}: the tool returns {@code [Delegation Rejected] <reason>}. */
  public static DelegationStartOutcome reject(String reason) {
    return DelegationStartOutcome.newBuilder().setReject(true).setRejectionReason(reason).build();
  }

  /** {@code onDelegationStart}: a new prompt for the sub-agent. */
  public static DelegationStartOutcome modifyPrompt(String prompt) {
    return DelegationStartOutcome.newBuilder().setModifiedPrompt(prompt).build();
  }

  /** {@code onDelegationComplete}: an assistant message added after the tool results. */
  public static DelegationCompleteOutcome feedback(String feedback) {
    return DelegationCompleteOutcome.newBuilder().setFeedback(feedback).build();
  }

  /** {@code onDelegationComplete}: end the parent's run after this step. */
  public static DelegationCompleteOutcome bail() {
    return DelegationCompleteOutcome.newBuilder().setBail(true).build();
  }
}
