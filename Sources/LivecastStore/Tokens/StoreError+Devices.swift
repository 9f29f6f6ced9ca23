extension StoreError.Code {
    /// A device holds as many live push-to-start tokens, or running activities, as one registered by the device's
    /// own key (a client key) may: it must end or unregister some first.
    package static let deviceLimitReached = StoreError.Code(rawValue: "device_limit_reached")
}
