// What the framework's processor examples call but do not define.

/** The quality score the Python twins' tests use: detailed answers pass. */
export async function evaluateResponseQuality(text: string): Promise<number> {
  return text.includes("detailed") ? 0.9 : 0.2;
}
