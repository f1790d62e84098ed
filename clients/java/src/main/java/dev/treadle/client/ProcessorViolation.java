package dev.treadle.client;

/**
 * What {@link Processor#onViolation} receives (the Mastra {@code ProcessorViolation}): the
 * processor that aborted, the abort's reason, its metadata as plain Java JSON values ({@code null}
 * when it gave none) and the hook that aborted ({@code "processInput"}, ...).
 */
public record ProcessorViolation(String processorId, String message, Object detail, String hook) {}
