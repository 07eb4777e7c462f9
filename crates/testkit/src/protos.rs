//! Proto descriptors for the tests of PROTO and ENUM types.
//!
//! A database resolves PROTO and ENUM column types against the descriptors
//! of its proto bundle (a serialized `FileDescriptorSet`, which clients
//! produce with `protoc --descriptor_set_out`). Tests build theirs here in
//! code instead, so no binary file or `protoc` is needed: [`music`] is the
//! package `examples.spanner.music` of Spanner's documentation examples,
//!
//! ```text
//! message SingerInfo { optional int64 singer_id = 1; optional string birth_date = 2;
//!                      optional string nationality = 3; optional Genre genre = 4;
//!                      repeated string aliases = 5; optional SingerInfo mentor = 6; }
//! enum Genre { POP = 0; JAZZ = 1; FOLK = 2; ROCK = 3; }
//! ```
//!
//! and [`singer_info`] serializes one message of it.

use prost_reflect::prost::Message;
use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use prost_reflect::prost_types::{
    DescriptorProto, EnumDescriptorProto, EnumValueDescriptorProto, FieldDescriptorProto,
    FileDescriptorProto, FileDescriptorSet,
};
use prost_reflect::{DescriptorPool, DynamicMessage, Value};

/// The package of [`music`].
pub const MUSIC_PACKAGE: &str = "examples.spanner.music";

fn field(
    name: &str,
    number: i32,
    ty: Type,
    label: Label,
    type_name: Option<&str>,
) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(number),
        label: Some(label as i32),
        r#type: Some(ty as i32),
        type_name: type_name.map(String::from),
        json_name: Some(name.into()),
        ..Default::default()
    }
}

/// The serialized `FileDescriptorSet` of `examples.spanner.music` (see the
/// module docs).
pub fn music() -> Vec<u8> {
    let genre = EnumDescriptorProto {
        name: Some("Genre".into()),
        value: ["POP", "JAZZ", "FOLK", "ROCK"]
            .iter()
            .zip(0..)
            .map(|(name, number)| EnumValueDescriptorProto {
                name: Some((*name).into()),
                number: Some(number),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let singer_info = DescriptorProto {
        name: Some("SingerInfo".into()),
        field: vec![
            field("singer_id", 1, Type::Int64, Label::Optional, None),
            field("birth_date", 2, Type::String, Label::Optional, None),
            field("nationality", 3, Type::String, Label::Optional, None),
            field(
                "genre",
                4,
                Type::Enum,
                Label::Optional,
                Some(".examples.spanner.music.Genre"),
            ),
            field("aliases", 5, Type::String, Label::Repeated, None),
            field(
                "mentor",
                6,
                Type::Message,
                Label::Optional,
                Some(".examples.spanner.music.SingerInfo"),
            ),
        ],
        ..Default::default()
    };
    let file = FileDescriptorProto {
        name: Some("examples/spanner/music/singer.proto".into()),
        package: Some(MUSIC_PACKAGE.into()),
        syntax: Some("proto2".into()),
        message_type: vec![singer_info],
        enum_type: vec![genre],
        ..Default::default()
    };
    FileDescriptorSet { file: vec![file] }.encode_to_vec()
}

/// A serialized `examples.spanner.music.SingerInfo` with the fields given
/// (`None` leaves a field unset).
pub fn singer_info(
    singer_id: Option<i64>,
    nationality: Option<&str>,
    genre: Option<i32>,
) -> Vec<u8> {
    let pool = DescriptorPool::decode(music().as_slice()).expect("the music descriptors decode");
    let descriptor = pool
        .get_message_by_name("examples.spanner.music.SingerInfo")
        .expect("SingerInfo is defined");
    let mut message = DynamicMessage::new(descriptor);
    if let Some(id) = singer_id {
        message.set_field_by_name("singer_id", Value::I64(id));
    }
    if let Some(n) = nationality {
        message.set_field_by_name("nationality", Value::String(n.into()));
    }
    if let Some(g) = genre {
        message.set_field_by_name("genre", Value::EnumNumber(g));
    }
    message.encode_to_vec()
}
