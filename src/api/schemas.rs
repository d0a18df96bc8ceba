//! OpenAPI schemas of domain types that live outside the API's reach (the plan layer's
//! roulette layout, lint findings, plan diffs). Written by hand here rather than derived, so
//! that those modules keep no dependency on the documentation; each follows the type's serde
//! form, and `tests/it/api_openapi.rs` checks real responses against them.

use std::borrow::Cow;

use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use crate::plan::diff::Change;
use crate::plan::load::{Finding, Severity};
use crate::plan::rules::roulette::{OutsideField, Spot};

fn string(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
}

impl PartialSchema for OutsideField {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "A field of the roulette layout for an outside bet: `dozen_1..3`, \
                 `column_1..3` (column 1 is 1, 4, …, 34), `red`/`black`, `even`/`odd`, \
                 `low` (1–18)/`high` (19–36).",
            ))
            .enum_values(Some(OutsideField::ALL.iter().map(|f| f.as_str())))
            .into()
    }
}

impl ToSchema for OutsideField {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OutsideField")
    }
}

impl PartialSchema for Spot {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .description(Some(
                "Where a placement lies: the inside numbers, ascending, or an outside field.",
            ))
            .item(
                ArrayBuilder::new()
                    .items(
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(0))
                            .maximum(Some(36)),
                    )
                    .min_items(Some(1)),
            )
            .item(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                OutsideField::name(),
            )))
            .into()
    }
}

impl ToSchema for Spot {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Spot")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((OutsideField::name().into_owned(), OutsideField::schema()));
    }
}

impl PartialSchema for Severity {
    fn schema() -> RefOr<Schema> {
        string("`error` refuses the plan; `warning` is reported and kept.")
            .enum_values(Some(["warning", "error"]))
            .into()
    }
}

impl ToSchema for Severity {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Severity")
    }
}

impl PartialSchema for Finding {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some("One lint finding of a plan file, with a stable code."))
            .property(
                "severity",
                RefOr::Ref(utoipa::openapi::Ref::from_schema_name(Severity::name())),
            )
            .required("severity")
            .property(
                "code",
                string("Stable code, e.g. `unknown_bet_type`, `max_win_inconsistent`."),
            )
            .required("code")
            .property("file", string("The plan file."))
            .required("file")
            .property(
                "line",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1))
                    .description(Some("1-based line in the file, where known.")),
            )
            .property(
                "path",
                string(
                    "Field path in the plan (`bets[straight].max_win`), empty for the whole file.",
                ),
            )
            .required("path")
            .property("message", string("A message for a person."))
            .required("message")
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .into()
    }
}

impl ToSchema for Finding {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Finding")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((Severity::name().into_owned(), Severity::schema()));
    }
}

impl PartialSchema for Change {
    fn schema() -> RefOr<Schema> {
        let any = |d: &str| {
            RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(SchemaType::AnyValue)
                    .description(Some(d))
                    .build(),
            ))
        };
        ObjectBuilder::new()
            .description(Some(
                "One changed field: absent `before` means added, absent `after` removed.",
            ))
            .property(
                "path",
                string("Keyed field path, e.g. `bets[straight].max_win`."),
            )
            .required("path")
            .property("before", any("The value in `from` (any JSON value)."))
            .property("after", any("The value in `to` (any JSON value)."))
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .into()
    }
}

impl ToSchema for Change {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Change")
    }
}
