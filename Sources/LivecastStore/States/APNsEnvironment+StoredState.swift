package import LivecastCore
import PostgresNIO

/// An app's APNs environment (`apps.environment`): `sandbox` or `production`, decoded and bound as itself like the
/// states.
extension APNsEnvironment: StoredState {}
