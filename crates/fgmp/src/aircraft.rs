//! What kind of aircraft a model path is, and its readable name: the written table
//! the map draws its symbols from and the logbook names aircraft by.
//!
//! FlightGear sends only a model path (`Aircraft/c172p/Models/c172p.xml`). The class
//! is read from the aircraft's directory (`c172p`) and the model's file name
//! (`c172p`), lower-cased, by the rules of [`RULES`], first match wins: exact names,
//! then prefixes, then words the name contains. ATC clients come first by the same
//! model test as [`crate::extras::is_atc`]. Anything unmatched is [`Class::Other`].
//!
//! ```
//! use fgmp::aircraft::{class, name, Class};
//! assert_eq!(class("Aircraft/c172p/Models/c172p.xml"), Class::SingleProp);
//! assert_eq!(class("Aircraft/A320-family/Models/A320-200-CFM.xml"), Class::Airliner);
//! assert_eq!(class("OpenRadar"), Class::Atc);
//! assert_eq!(name("Aircraft/c172p/Models/c172p.xml"), "Cessna 172P Skyhawk");
//! assert_eq!(name("Aircraft/unknown/Models/my-plane.xml"), "my-plane");
//! ```

/// The classes the map has a symbol for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// A jet airliner or a large transport (`737`, `A320`, `777`, `Concorde`).
    Airliner,
    /// A business jet (`Citation`, `Learjet`, `Gulfstream`).
    BusinessJet,
    /// A single-engine propeller aircraft, piston or turboprop (`c172p`, `j3cub`).
    SingleProp,
    /// A propeller aircraft with two or more engines (`c310`, `dhc6`, `dc3`, `c130`).
    TwinProp,
    /// A helicopter (`ec130`, `bo105`, `uh1`).
    Helicopter,
    /// A glider (`ask21`, `dg-101`).
    Glider,
    /// A military jet (`f-14b`, `su-27`, `mirage2000`).
    MilitaryJet,
    /// An airship or a balloon (`zeppelin`, `hot-air balloon`).
    Airship,
    /// A carrier or another ship (`mp-nimitz`).
    Ship,
    /// An ATC station (OpenRadar, ATC-pie, a model containing "ATC").
    Atc,
    /// Anything else (`ufo`, a walker, an unknown model).
    Other,
}

impl Class {
    /// Every class, in declaration order.
    pub const ALL: [Class; 11] = [
        Class::Airliner,
        Class::BusinessJet,
        Class::SingleProp,
        Class::TwinProp,
        Class::Helicopter,
        Class::Glider,
        Class::MilitaryJet,
        Class::Airship,
        Class::Ship,
        Class::Atc,
        Class::Other,
    ];

    /// The name in the API and the page (`airliner`, `single_prop`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Airliner => "airliner",
            Class::BusinessJet => "business_jet",
            Class::SingleProp => "single_prop",
            Class::TwinProp => "twin_prop",
            Class::Helicopter => "helicopter",
            Class::Glider => "glider",
            Class::MilitaryJet => "military_jet",
            Class::Airship => "airship",
            Class::Ship => "ship",
            Class::Atc => "atc",
            Class::Other => "other",
        }
    }
}

/// How a rule's pattern is compared with the aircraft's directory and file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The whole name.
    Exact,
    /// The start of the name.
    Prefix,
    /// Anywhere in the name.
    Contains,
}

/// One line of the table: a lower-case pattern, how it matches, the class.
pub type Rule = (&'static str, Match, Class);

use Class::*;
use Match::*;

/// The table, in the order it is tried (all exact rules, then prefixes, then
/// contains; within each, the first match wins).
pub const RULES: &[Rule] = &[
    // Exact names of FGAddon's aircraft whose names say nothing general.
    ("ufo", Exact, Other),
    ("bluebird", Exact, Other),
    ("walker", Exact, Other),
    ("c172p", Exact, SingleProp),
    ("c172", Exact, SingleProp),
    ("c182s", Exact, SingleProp),
    ("c182t", Exact, SingleProp),
    ("c182", Exact, SingleProp),
    ("c150", Exact, SingleProp),
    ("c152", Exact, SingleProp),
    ("c177", Exact, SingleProp),
    ("c208", Exact, SingleProp),
    ("c206", Exact, SingleProp),
    ("c310", Exact, TwinProp),
    ("c310r", Exact, TwinProp),
    ("c337", Exact, TwinProp),
    ("c130", Exact, TwinProp),
    ("c-130", Exact, TwinProp),
    ("c130j", Exact, TwinProp),
    ("c47", Exact, TwinProp),
    ("dc3", Exact, TwinProp),
    ("dc-3", Exact, TwinProp),
    ("dhc2", Exact, SingleProp),
    ("dhc2f", Exact, SingleProp),
    ("dhc3", Exact, SingleProp),
    ("dhc6", Exact, TwinProp),
    ("dhc8", Exact, TwinProp),
    ("j3cub", Exact, SingleProp),
    ("pa18", Exact, SingleProp),
    ("pa24", Exact, SingleProp),
    ("pa28", Exact, SingleProp),
    ("pa28-161", Exact, SingleProp),
    ("pa23", Exact, TwinProp),
    ("pa34", Exact, TwinProp),
    ("sr22", Exact, SingleProp),
    ("dr400", Exact, SingleProp),
    ("tb20", Exact, SingleProp),
    ("pc6", Exact, SingleProp),
    ("pc7", Exact, SingleProp),
    ("pc9", Exact, SingleProp),
    ("pc12", Exact, SingleProp),
    ("p51d", Exact, SingleProp),
    ("spitfire", Exact, SingleProp),
    ("f4u", Exact, SingleProp),
    ("a6m2", Exact, SingleProp),
    ("p38", Exact, TwinProp),
    ("b17", Exact, TwinProp),
    ("b29", Exact, TwinProp),
    ("pby", Exact, TwinProp),
    ("b1900d", Exact, TwinProp),
    ("beech99", Exact, TwinProp),
    ("kingair", Exact, TwinProp),
    ("b350", Exact, TwinProp),
    ("atr72", Exact, TwinProp),
    ("atr42", Exact, TwinProp),
    ("saab340", Exact, TwinProp),
    ("f27", Exact, TwinProp),
    ("q400", Exact, TwinProp),
    ("a400m", Exact, TwinProp),
    ("a10", Exact, MilitaryJet),
    ("a-10", Exact, MilitaryJet),
    ("a4f", Exact, MilitaryJet),
    ("a-4", Exact, MilitaryJet),
    ("a-6e", Exact, MilitaryJet),
    ("sr71", Exact, MilitaryJet),
    ("sr71-blackbird", Exact, MilitaryJet),
    ("hawk", Exact, MilitaryJet),
    ("l39", Exact, MilitaryJet),
    ("l-39", Exact, MilitaryJet),
    ("t38", Exact, MilitaryJet),
    ("t-38", Exact, MilitaryJet),
    ("jaguar", Exact, MilitaryJet),
    ("tornado", Exact, MilitaryJet),
    ("typhoon", Exact, MilitaryJet),
    ("rafale", Exact, MilitaryJet),
    ("harrier", Exact, MilitaryJet),
    ("av-8b", Exact, MilitaryJet),
    ("vulcan", Exact, MilitaryJet),
    ("victor", Exact, MilitaryJet),
    ("buccaneer", Exact, MilitaryJet),
    ("hunter", Exact, MilitaryJet),
    ("lightning", Exact, MilitaryJet),
    ("gripen", Exact, MilitaryJet),
    ("viggen", Exact, MilitaryJet),
    ("ja37", Exact, MilitaryJet),
    ("jas39", Exact, MilitaryJet),
    ("draken", Exact, MilitaryJet),
    ("alphajet", Exact, MilitaryJet),
    ("mb339", Exact, MilitaryJet),
    ("kc135", Exact, MilitaryJet),
    ("kc-135", Exact, MilitaryJet),
    ("e3b", Exact, MilitaryJet),
    ("concorde", Exact, Airliner),
    ("eclipse500", Exact, BusinessJet),
    ("hondajet", Exact, BusinessJet),
    ("pc24", Exact, BusinessJet),
    ("r22", Exact, Helicopter),
    ("r44", Exact, Helicopter),
    ("s76", Exact, Helicopter),
    ("s76c", Exact, Helicopter),
    ("s92", Exact, Helicopter),
    ("bo105", Exact, Helicopter),
    ("alouette3", Exact, Helicopter),
    ("alouette2", Exact, Helicopter),
    ("as350", Exact, Helicopter),
    ("aw109", Exact, Helicopter),
    ("ka50", Exact, Helicopter),
    ("mi24", Exact, Helicopter),
    ("mi8", Exact, Helicopter),
    ("ah1", Exact, Helicopter),
    ("ah64", Exact, Helicopter),
    ("ask13", Exact, Glider),
    ("ask21", Exact, Glider),
    ("asg29", Exact, Glider),
    ("dg101", Exact, Glider),
    ("dg-101g", Exact, Glider),
    ("dg808", Exact, Glider),
    ("ls8", Exact, Glider),
    ("ka8", Exact, Glider),
    ("sgs233", Exact, Glider),
    ("bocian", Exact, Glider),
    ("grob103", Exact, Glider),
    ("nimbus", Exact, Glider),
    ("antares", Exact, Glider),
    // Prefixes: families whose names start alike.
    ("openradar", Prefix, Atc),
    ("atc-pie", Prefix, Atc),
    ("atc", Prefix, Atc),
    ("mp-nimitz", Prefix, Ship),
    ("mp-eisenhower", Prefix, Ship),
    ("mp-vinson", Prefix, Ship),
    ("mp-clemenceau", Prefix, Ship),
    ("mp-foch", Prefix, Ship),
    ("nimitz", Prefix, Ship),
    ("707", Prefix, Airliner),
    ("717", Prefix, Airliner),
    ("727", Prefix, Airliner),
    ("737", Prefix, Airliner),
    ("747", Prefix, Airliner),
    ("757", Prefix, Airliner),
    ("767", Prefix, Airliner),
    ("777", Prefix, Airliner),
    ("787", Prefix, Airliner),
    ("b707", Prefix, Airliner),
    ("b737", Prefix, Airliner),
    ("b747", Prefix, Airliner),
    ("b757", Prefix, Airliner),
    ("b767", Prefix, Airliner),
    ("b777", Prefix, Airliner),
    ("b787", Prefix, Airliner),
    ("a300", Prefix, Airliner),
    ("a310", Prefix, Airliner),
    ("a318", Prefix, Airliner),
    ("a319", Prefix, Airliner),
    ("a320", Prefix, Airliner),
    ("a321", Prefix, Airliner),
    ("a330", Prefix, Airliner),
    ("a340", Prefix, Airliner),
    ("a350", Prefix, Airliner),
    ("a380", Prefix, Airliner),
    ("a220", Prefix, Airliner),
    ("md11", Prefix, Airliner),
    ("md-11", Prefix, Airliner),
    ("md8", Prefix, Airliner),
    ("md-8", Prefix, Airliner),
    ("md9", Prefix, Airliner),
    ("dc-8", Prefix, Airliner),
    ("dc8", Prefix, Airliner),
    ("dc-9", Prefix, Airliner),
    ("dc9", Prefix, Airliner),
    ("dc-10", Prefix, Airliner),
    ("dc10", Prefix, Airliner),
    ("crj", Prefix, Airliner),
    ("erj", Prefix, Airliner),
    ("e-jet", Prefix, Airliner),
    ("embraere", Prefix, Airliner),
    ("e170", Prefix, Airliner),
    ("e190", Prefix, Airliner),
    ("e195", Prefix, Airliner),
    ("bae146", Prefix, Airliner),
    ("avro-rj", Prefix, Airliner),
    ("fokker100", Prefix, Airliner),
    ("fokker70", Prefix, Airliner),
    ("tu-1", Prefix, Airliner),
    ("tu1", Prefix, Airliner),
    ("il-62", Prefix, Airliner),
    ("il-76", Prefix, Airliner),
    ("il-96", Prefix, Airliner),
    ("an-124", Prefix, Airliner),
    ("an-225", Prefix, Airliner),
    ("c-17", Prefix, Airliner),
    ("c17", Prefix, Airliner),
    ("citation", Prefix, BusinessJet),
    ("learjet", Prefix, BusinessJet),
    ("lear", Prefix, BusinessJet),
    ("gulfstream", Prefix, BusinessJet),
    ("g550", Prefix, BusinessJet),
    ("giv", Prefix, BusinessJet),
    ("falcon", Prefix, BusinessJet),
    ("challenger", Prefix, BusinessJet),
    ("cl300", Prefix, BusinessJet),
    ("global", Prefix, BusinessJet),
    ("c510", Prefix, BusinessJet),
    ("c525", Prefix, BusinessJet),
    ("c750", Prefix, BusinessJet),
    ("f-1", Prefix, MilitaryJet),
    ("f1", Prefix, MilitaryJet),
    ("f-2", Prefix, MilitaryJet),
    ("f-35", Prefix, MilitaryJet),
    ("f-4", Prefix, MilitaryJet),
    ("f4", Prefix, MilitaryJet),
    ("f-8", Prefix, MilitaryJet),
    ("fa-18", Prefix, MilitaryJet),
    ("f-86", Prefix, MilitaryJet),
    ("su-", Prefix, MilitaryJet),
    ("su2", Prefix, MilitaryJet),
    ("su3", Prefix, MilitaryJet),
    ("mig", Prefix, MilitaryJet),
    ("mirage", Prefix, MilitaryJet),
    ("m2000", Prefix, MilitaryJet),
    ("b-52", Prefix, MilitaryJet),
    ("b52", Prefix, MilitaryJet),
    ("b1b", Prefix, MilitaryJet),
    ("b-1b", Prefix, MilitaryJet),
    ("b2", Prefix, MilitaryJet),
    ("b-2", Prefix, MilitaryJet),
    ("eurofighter", Prefix, MilitaryJet),
    ("ec1", Prefix, Helicopter),
    ("ec6", Prefix, Helicopter),
    ("uh-", Prefix, Helicopter),
    ("uh1", Prefix, Helicopter),
    ("uh60", Prefix, Helicopter),
    ("ch47", Prefix, Helicopter),
    ("ch-47", Prefix, Helicopter),
    ("ch53", Prefix, Helicopter),
    ("bell", Prefix, Helicopter),
    ("alouette", Prefix, Helicopter),
    ("ask", Prefix, Glider),
    ("asw", Prefix, Glider),
    ("dg-", Prefix, Glider),
    ("discus", Prefix, Glider),
    ("duodiscus", Prefix, Glider),
    ("zeppelin", Prefix, Airship),
    ("zlt", Prefix, Airship),
    // Words anywhere in the name.
    ("balloon", Contains, Airship),
    ("airship", Contains, Airship),
    ("blimp", Contains, Airship),
    ("zeppelin", Contains, Airship),
    ("carrier", Contains, Ship),
    ("ship", Contains, Ship),
    ("boat", Contains, Ship),
    ("ferry", Contains, Ship),
    ("helicopter", Contains, Helicopter),
    ("heli", Contains, Helicopter),
    ("glider", Contains, Glider),
    ("sailplane", Contains, Glider),
    ("citation", Contains, BusinessJet),
    ("learjet", Contains, BusinessJet),
    ("bizjet", Contains, BusinessJet),
    ("airbus", Contains, Airliner),
    ("boeing", Contains, Airliner),
    ("-jet", Contains, MilitaryJet),
    ("fighter", Contains, MilitaryJet),
    ("cessna", Contains, SingleProp),
    ("piper", Contains, SingleProp),
    ("cub", Contains, SingleProp),
];

/// Readable names of the aircraft pilots fly most, by the model's file name
/// (lower-case); any other aircraft is named by its file name as sent.
pub const NAMES: &[(&str, &str)] = &[
    ("c172p", "Cessna 172P Skyhawk"),
    ("c182s", "Cessna 182S Skylane"),
    ("c182t", "Cessna 182T Skylane"),
    ("c150", "Cessna 150"),
    ("c152", "Cessna 152"),
    ("c310", "Cessna 310"),
    ("c208", "Cessna 208 Caravan"),
    ("j3cub", "Piper J-3 Cub"),
    ("pa28-161", "Piper PA-28-161 Warrior II"),
    ("pa34", "Piper PA-34 Seneca"),
    ("dr400", "Robin DR400"),
    ("sr22", "Cirrus SR22"),
    ("dhc2", "de Havilland Canada DHC-2 Beaver"),
    ("dhc6", "de Havilland Canada DHC-6 Twin Otter"),
    ("dc3", "Douglas DC-3"),
    ("p51d", "North American P-51D Mustang"),
    ("spitfire", "Supermarine Spitfire"),
    ("ufo", "UFO"),
    ("bo105", "MBB Bo 105"),
    ("ec130b4", "Eurocopter EC130 B4"),
    ("ec135p2", "Eurocopter EC135 P2"),
    ("uh1", "Bell UH-1 Iroquois"),
    ("r22", "Robinson R22"),
    ("ask21", "Schleicher ASK 21"),
    ("ask13", "Schleicher ASK 13"),
    ("dg-101g", "Glaser-Dirks DG-101G"),
    ("737-300", "Boeing 737-300"),
    ("737-800", "Boeing 737-800"),
    ("747-400", "Boeing 747-400"),
    ("747-8i", "Boeing 747-8I"),
    ("757-200", "Boeing 757-200"),
    ("767-300", "Boeing 767-300"),
    ("777-200", "Boeing 777-200"),
    ("777-300er", "Boeing 777-300ER"),
    ("787-8", "Boeing 787-8"),
    ("a320-200-cfm", "Airbus A320-200 (CFM)"),
    ("a320-200-iae", "Airbus A320-200 (IAE)"),
    ("a320neo-cfm", "Airbus A320neo (CFM)"),
    ("a321-200-cfm", "Airbus A321-200 (CFM)"),
    ("a330-200", "Airbus A330-200"),
    ("a380", "Airbus A380"),
    ("md-11", "McDonnell Douglas MD-11"),
    ("crj700", "Bombardier CRJ700"),
    ("concorde", "Aérospatiale-BAC Concorde"),
    ("citationx", "Cessna Citation X"),
    ("learjet35", "Learjet 35"),
    ("f-14b", "Grumman F-14B Tomcat"),
    ("f-15c", "McDonnell Douglas F-15C Eagle"),
    ("f16", "General Dynamics F-16"),
    ("f-16", "General Dynamics F-16"),
    ("su-27sk", "Sukhoi Su-27SK"),
    ("mig21bis", "Mikoyan-Gurevich MiG-21bis"),
    ("m2000-5", "Dassault Mirage 2000-5"),
    ("sr71", "Lockheed SR-71 Blackbird"),
    ("a-10", "Fairchild Republic A-10 Thunderbolt II"),
    ("c130", "Lockheed C-130 Hercules"),
    ("mp-nimitz", "USS Nimitz (carrier)"),
    ("mp-eisenhower", "USS Dwight D. Eisenhower (carrier)"),
    ("mp-vinson", "USS Carl Vinson (carrier)"),
    ("zlt-nt", "Zeppelin NT"),
    ("openradar", "OpenRadar (ATC)"),
];

/// The aircraft's directory (after `Aircraft/`) and its model's file name without
/// `.xml`, lower-cased; a path with no `/` gives the whole path as both.
fn names(model: &str) -> (String, String) {
    let lower = model.trim().to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    let file = file.strip_suffix(".xml").unwrap_or(file).to_string();
    let mut parts = lower.split('/');
    let dir = loop {
        match parts.next() {
            Some("aircraft") => break parts.next().unwrap_or(&file).to_string(),
            Some(_) => continue,
            None => break file.clone(),
        }
    };
    (dir, file)
}

fn matches(pattern: &str, how: Match, name: &str) -> bool {
    match how {
        Exact => name == pattern,
        Prefix => name.starts_with(pattern),
        Contains => name.contains(pattern),
    }
}

/// The class of the aircraft a model path names.
pub fn class(model: &str) -> Class {
    if model == "OpenRadar" || model.contains("ATC") {
        return Atc; // fgms's test (crate::extras::is_atc), whatever the callsign
    }
    let (dir, file) = names(model);
    for how in [Exact, Prefix, Contains] {
        for &(pattern, h, class) in RULES {
            if h == how && (matches(pattern, how, &file) || matches(pattern, how, &dir)) {
                return class;
            }
        }
    }
    Other
}

/// The aircraft's readable name: from [`NAMES`] by the model's file name, else the
/// file name as sent (without `.xml`).
pub fn name(model: &str) -> String {
    let (_, file) = names(model);
    if let Some(&(_, n)) = NAMES.iter().find(|(k, _)| *k == file) {
        return n.to_string();
    }
    let base = model.rsplit('/').next().unwrap_or(model);
    base.strip_suffix(".xml").unwrap_or(base).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Model paths as FlightGear 2020.3 sends them, with the class a pilot would
    /// draw them as.
    const KNOWN: &[(&str, Class)] = &[
        ("Aircraft/c172p/Models/c172p.xml", SingleProp),
        ("Aircraft/c182/Models/c182s.xml", SingleProp),
        ("Aircraft/J3Cub/Models/J3Cub.xml", SingleProp),
        ("Aircraft/Dragonfly/Models/Dragonfly.xml", Other),
        ("Aircraft/PA-34/Models/pa34.xml", TwinProp),
        ("Aircraft/dhc6/Models/dhc6.xml", TwinProp),
        ("Aircraft/c130/Models/c130.xml", TwinProp),
        ("Aircraft/A320-family/Models/A320-200-CFM.xml", Airliner),
        ("Aircraft/737-800/Models/737-800.xml", Airliner),
        ("Aircraft/747-8i/Models/747-8i.xml", Airliner),
        ("Aircraft/777/Models/777-200ER.xml", Airliner),
        ("Aircraft/MD-11/Models/MD-11.xml", Airliner),
        ("Aircraft/CRJ700-family/Models/CRJ900.xml", Airliner),
        ("Aircraft/Concorde/Models/Concorde.xml", Airliner),
        ("Aircraft/CitationX/Models/CitationX.xml", BusinessJet),
        ("Aircraft/Learjet35-D/Models/learjet35.xml", BusinessJet),
        ("Aircraft/ec130/Models/ec130b4.xml", Helicopter),
        ("Aircraft/bo105/Models/bo105.xml", Helicopter),
        ("Aircraft/UH-1/Models/uh1.xml", Helicopter),
        ("Aircraft/Alouette-III/Models/alouette3.xml", Helicopter),
        ("Aircraft/ASK21/Models/ask21.xml", Glider),
        ("Aircraft/DG-101G/Models/dg-101g.xml", Glider),
        ("Aircraft/f-14b/Models/f-14b.xml", MilitaryJet),
        ("Aircraft/F-15/Models/f-15c.xml", MilitaryJet),
        ("Aircraft/f16/Models/f16.xml", MilitaryJet),
        ("Aircraft/SU-27SK/Models/su-27sk.xml", MilitaryJet),
        ("Aircraft/MiG-21bis/Models/mig21bis.xml", MilitaryJet),
        ("Aircraft/Mirage-2000/Models/m2000-5.xml", MilitaryJet),
        ("Aircraft/SR71-BlackBird/Models/sr71.xml", MilitaryJet),
        ("Aircraft/ZLT-NT/Models/ZLT-NT.xml", Airship),
        ("Aircraft/Hot-Air-Balloon/Models/balloon.xml", Airship),
        ("Aircraft/MPCarrier/Models/mp-nimitz.xml", Ship),
        ("Aircraft/MPCarrier/Models/mp-eisenhower.xml", Ship),
        ("OpenRadar", Atc),
        ("Aircraft/ATC/Models/atc.xml", Atc),
        ("Aircraft/ufo/Models/ufo.xml", Other),
        ("Aircraft/Catcher/Models/catcher.xml", Other),
        ("Aircraft/Generic/Human/Models/walker.xml", Other),
        ("", Other),
    ];

    #[test]
    fn known_models_have_their_class() {
        for &(model, want) in KNOWN {
            assert_eq!(class(model), want, "{model}");
        }
    }

    #[test]
    fn every_class_but_one_is_reached_by_a_known_model() {
        for c in Class::ALL {
            assert!(
                KNOWN.iter().any(|&(_, k)| k == c),
                "{c:?} has no test model"
            );
        }
    }

    #[test]
    fn every_rule_is_lower_case_and_reachable() {
        for (i, &(pattern, how, class_)) in RULES.iter().enumerate() {
            assert_eq!(pattern, pattern.to_ascii_lowercase(), "rule {i}");
            // A model named by the pattern itself gets the rule's class, unless an
            // earlier rule of a stronger kind takes it (then the rule is dead).
            let model = format!("Aircraft/{pattern}/Models/{pattern}.xml");
            let got = class(&model);
            if got != class_ {
                let earlier = RULES[..i]
                    .iter()
                    .chain(RULES[i + 1..].iter())
                    .any(|&(p, h, c)| {
                        c == got && (h as u8) <= (how as u8) && matches(p, h, pattern)
                    });
                assert!(
                    earlier || pattern.to_ascii_uppercase().contains("ATC"),
                    "rule {i} {pattern:?} is shadowed: {got:?}"
                );
            }
        }
    }

    #[test]
    fn names_are_readable_or_the_file_name() {
        assert_eq!(
            name("Aircraft/A320-family/Models/A320-200-CFM.xml"),
            "Airbus A320-200 (CFM)"
        );
        assert_eq!(name("Aircraft/x/Models/Something Odd.xml"), "Something Odd");
        assert_eq!(name("OpenRadar"), "OpenRadar (ATC)");
        assert_eq!(name(""), "");
        for &(k, _) in NAMES {
            assert_eq!(k, k.to_ascii_lowercase());
        }
    }

    #[test]
    fn the_atc_rule_agrees_with_fgms_rule() {
        for model in [
            "OpenRadar",
            "ATC-pie",
            "Aircraft/atc/Models/ATC.xml",
            "myATCclient",
        ] {
            assert!(crate::extras::is_atc("EDDF_TW", model), "{model}");
            assert_eq!(class(model), Atc, "{model}");
        }
    }

    proptest! {
        #[test]
        fn any_model_has_a_class_and_a_name(model in "\\PC{0,200}") {
            let _ = class(&model);
            let n = name(&model);
            prop_assert!(n.len() <= model.len().max(64));
        }
    }
}
