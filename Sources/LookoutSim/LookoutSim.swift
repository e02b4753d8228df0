/// LookoutSim: local servers that behave like the real services (Nightscout first), implemented
/// from the specs in shared/specs, sharing no code with the Kits, for tests and `lookout sim`.
///
/// Nightscout: ``NightscoutSimulator`` (API v1, v2 auth + Loop notifications, v3), fault injection
/// (``NightscoutFault``), synthetic data (``CGMGenerator``) and Loop OTP codes (``LoopOTP``).
public enum LookoutSim {}
