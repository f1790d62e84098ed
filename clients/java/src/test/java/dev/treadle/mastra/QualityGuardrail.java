package dev.treadle.mastra;

import dev.treadle.client.ProcessOutputStepArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.TripwireException;
import dev.treadle.v1.ReplaceOutcome;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** Asks for a better answer while its quality is too low, three times at most. */
public final class QualityGuardrail implements Processor {
  private final ToDoubleFunction<String> evaluateResponseQuality;

  public QualityGuardrail(ToDoubleFunction<String> evaluateResponseQuality) {
    this.evaluateResponseQuality = evaluateResponseQuality;
  }

  @Override
  public String id() {
    return "quality-guardrail";
  }

  @Override
  public ReplaceOutcome processOutputStep(ProcessOutputStepArgs args) {
    double score = evaluateResponseQuality.applyAsDouble(args.text());
    if (score < 0.7) {
      if (args.retryCount() < 3) {
        // Request retry with feedback for the LLM
        throw args.abort("Response quality too low. Please provide more detail.",
            TripwireException.Options.retry().metadata(Map.of("qualityScore", score)));
      }
      // Max retries reached, block the response
      throw args.abort("Response quality too low after multiple attempts.");
    }
    return null;
  }
}
