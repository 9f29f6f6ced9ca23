extension Duration {
    /// The duration in seconds, as a floating-point number.
    var inSeconds: Double {
        Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18
    }
}
