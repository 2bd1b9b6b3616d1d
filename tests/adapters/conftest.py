import os

# No telemetry, tracing or usage reporting from the agent frameworks in tests (before they import).
for _name, _value in (("CREWAI_TRACING_ENABLED", "false"), ("CREWAI_DISABLE_TELEMETRY", "true"), ("CREWAI_DISABLE_TRACKING", "true"),
                      ("OTEL_SDK_DISABLED", "true"), ("LANGSMITH_TRACING", "false"), ("LANGCHAIN_TRACING_V2", "false"),
                      ("ANONYMIZED_TELEMETRY", "false")):
    os.environ[_name] = _value
