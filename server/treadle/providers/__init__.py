"""Language model providers: the protocol, OpenAI, Anthropic, fallback and the router."""
