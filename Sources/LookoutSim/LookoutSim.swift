/// LookoutSim: local servers that behave like the real services (Nightscout first), implemented
/// from the specs in shared/specs, sharing no code with the Kits, for tests and `lookout sim`.
public enum LookoutSim {}
