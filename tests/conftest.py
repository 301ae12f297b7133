"""Settings for the whole suite."""

from hypothesis import HealthCheck, settings

# The suite runs on shared, busy machines (2 cores, CI beside other jobs): a property's examples may take
# longer than Hypothesis's defaults allow without anything being wrong, so time is not a failure here.
# What a property asserts is; a test that needs a deadline sets its own.
settings.register_profile("shared-machine", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("shared-machine")
