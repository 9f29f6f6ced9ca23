import Foundation

/// The UTC days an export asks for, from the job's "today": Apple takes a `startDate` at most 30 days back and an
/// `endDate` after it and at least a day back, both `yyyy-MM-dd`.
struct ExportDays {
    /// A request's first and last day.
    struct Range: Equatable {
        let from: String
        let through: String
    }

    /// Yesterday, the last day Apple exports.
    let yesterday: String
    /// The first day Apple exports (`backfill` days back).
    let earliest: String
    private let dayBeforeYesterday: String

    init(today: Date, backfill: Int) {
        let days = Int(floor(today.timeIntervalSince1970 / 86400))
        self.yesterday = Self.text(days - 1)
        self.dayBeforeYesterday = Self.text(days - 2)
        self.earliest = Self.text(days - max(backfill, 2))
    }

    /// The days to ask for, given the last day the export holds: from the day before it (Apple may still revise that
    /// one) or from the earliest, through yesterday; `nil` when it holds yesterday already.
    func range(after fetchedThrough: String?) -> Range? {
        guard let fetchedThrough else { return Range(from: self.earliest, through: self.yesterday) }
        guard fetchedThrough < self.yesterday else { return nil }
        let dayBefore = Self.day(fetchedThrough).map { Self.text($0 - 1) } ?? self.earliest
        return Range(from: min(max(dayBefore, self.earliest), self.dayBeforeYesterday), through: self.yesterday)
    }

    /// `yyyy-MM-dd` of a day since 1970 (the proleptic Gregorian calendar, as Howard Hinnant's `civil_from_days`).
    static func text(_ day: Int) -> String {
        let shifted = day + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return String(format: "%04d-%02d-%02d", year, month, dayOfMonth)
    }

    /// The day since 1970 of `yyyy-MM-dd` (Hinnant's `days_from_civil`), or `nil`.
    static func day(_ text: String) -> Int? {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(dayOfMonth)
        else { return nil }
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + dayOfMonth - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
