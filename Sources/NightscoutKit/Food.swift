import Foundation
import LookoutWire

/// A `food` document (spec §4.6): a food or a quick pick.
@dynamicMemberLookup
public struct Food: NightscoutDocument {
    /// Common fields.
    public var common: CommonFields
    /// `food`: `food` or `quickpick`.
    public var food: String?
    /// `category`.
    public var category: String?
    /// `subcategory`.
    public var subcategory: String?
    /// `name`.
    public var name: String?
    /// `portion`.
    public var portion: Double?
    /// `unit`.
    public var unit: String?
    /// `carbs`, grams.
    public var carbs: Double?
    /// `fat`, grams.
    public var fat: Double?
    /// `protein`, grams.
    public var protein: Double?
    /// `energy`, kJ.
    public var energy: Double?
    /// `gi` (1–3).
    public var gi: Int?
    /// `hideafteruse`.
    public var hideafteruse: Bool?
    /// `hidden`.
    public var hidden: Bool?
    /// `position`.
    public var position: Int?
    /// `portions`.
    public var portions: Double?
    /// `foods` (quick pick components), kept as JSON.
    public var foods: JSONValue?
    /// Fields the model does not know, kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates a food document.
    public init(common: CommonFields = CommonFields(), food: String? = nil, category: String? = nil,
                subcategory: String? = nil, name: String? = nil, portion: Double? = nil, unit: String? = nil,
                carbs: Double? = nil, fat: Double? = nil, protein: Double? = nil, energy: Double? = nil,
                gi: Int? = nil, hideafteruse: Bool? = nil, hidden: Bool? = nil, position: Int? = nil,
                portions: Double? = nil, foods: JSONValue? = nil, extra: [String: JSONValue] = [:]) {
        self.common = common; self.food = food; self.category = category; self.subcategory = subcategory
        self.name = name; self.portion = portion; self.unit = unit; self.carbs = carbs; self.fat = fat
        self.protein = protein; self.energy = energy; self.gi = gi; self.hideafteruse = hideafteruse
        self.hidden = hidden; self.position = position; self.portions = portions; self.foods = foods
        self.extra = extra
    }

    /// Decodes leniently; unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        common = try CommonFields(reading: &r)
        food = try r.string("food")
        category = try r.string("category")
        subcategory = try r.string("subcategory")
        name = try r.string("name")
        portion = try r.double("portion")
        unit = try r.string("unit")
        carbs = try r.double("carbs")
        fat = try r.double("fat")
        protein = try r.double("protein")
        energy = try r.double("energy")
        gi = try r.int("gi")
        hideafteruse = try r.bool("hideafteruse")
        hidden = try r.bool("hidden")
        position = try r.int("position")
        portions = try r.double("portions")
        foods = try r.value("foods")
        extra = try r.extras()
    }

    /// Encodes, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try common.write(to: &w)
        try w.put("food", food)
        try w.put("category", category)
        try w.put("subcategory", subcategory)
        try w.put("name", name)
        try w.number("portion", portion)
        try w.put("unit", unit)
        try w.number("carbs", carbs)
        try w.number("fat", fat)
        try w.number("protein", protein)
        try w.number("energy", energy)
        try w.put("gi", gi)
        try w.put("hideafteruse", hideafteruse)
        try w.put("hidden", hidden)
        try w.put("position", position)
        try w.number("portions", portions)
        try w.put("foods", foods)
        try w.finish(extra: extra)
    }
}
