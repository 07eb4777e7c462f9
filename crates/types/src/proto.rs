//! The proto bundle's descriptors: what PROTO and ENUM types mean.
//!
//! A database's proto bundle names the protocol buffer messages and enums
//! its columns and queries may use; the descriptors (a serialized
//! `google.protobuf.FileDescriptorSet`, given to CreateDatabase or
//! UpdateDatabaseDdl) say what they are. [`ProtoBundle`] decodes them once
//! (with `prost-reflect`, pure Rust) and answers the questions the layers
//! above ask:
//!
//! * the schema: is `a.b.C` a message ([`Type::Proto`]) or an enum
//!   ([`Type::Enum`]), or unknown ([`ProtoBundle::type_of`]);
//! * casts: an enum value's name from its number and back
//!   ([`ProtoBundle::enum_name`], [`ProtoBundle::enum_number`]);
//! * field access (`info.nationality`): the field's GoogleSQL type
//!   ([`field_type`]) and its value in a serialized message ([`read_field`]).
//!
//! Values stay in their stored form everywhere (a message as its bytes, an
//! enum as its number), so only these questions need the descriptors.

use std::fmt;

pub use prost_reflect;
use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};

use crate::{Type, Value};

/// Whether a proto bundle type is a message or an enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtoKind {
    Message,
    Enum,
}

/// Decoded protocol buffer descriptors, with the bytes they came from.
#[derive(Clone)]
pub struct ProtoBundle {
    bytes: Vec<u8>,
    pool: DescriptorPool,
}

impl fmt::Debug for ProtoBundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProtoBundle({} bytes)", self.bytes.len())
    }
}

impl PartialEq for ProtoBundle {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl ProtoBundle {
    /// Decodes a serialized `FileDescriptorSet`. The error says why the
    /// descriptors are not valid (a missing import, a malformed file, ...).
    pub fn decode(bytes: &[u8]) -> Result<ProtoBundle, String> {
        let pool = DescriptorPool::decode(bytes).map_err(|e| e.to_string())?;
        Ok(ProtoBundle {
            bytes: bytes.to_vec(),
            pool,
        })
    }

    /// The serialized `FileDescriptorSet` this bundle was decoded from.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The descriptor pool.
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    /// Whether `name` (fully qualified, without a leading dot) is a message
    /// or an enum of these descriptors; `None` if neither.
    pub fn kind(&self, name: &str) -> Option<ProtoKind> {
        if self.pool.get_message_by_name(name).is_some() {
            Some(ProtoKind::Message)
        } else if self.pool.get_enum_by_name(name).is_some() {
            Some(ProtoKind::Enum)
        } else {
            None
        }
    }

    /// The GoogleSQL type `name` denotes: [`Type::Proto`] or [`Type::Enum`].
    pub fn type_of(&self, name: &str) -> Option<Type> {
        self.kind(name).map(|k| match k {
            ProtoKind::Message => Type::Proto(name.to_string()),
            ProtoKind::Enum => Type::Enum(name.to_string()),
        })
    }

    /// The message descriptor named `name`.
    pub fn message(&self, name: &str) -> Option<MessageDescriptor> {
        self.pool.get_message_by_name(name)
    }

    /// The name of the value numbered `number` of enum `enum_name`; `None`
    /// if the enum has no such value (or does not exist).
    pub fn enum_name(&self, enum_name: &str, number: i64) -> Option<String> {
        let number = i32::try_from(number).ok()?;
        let e = self.pool.get_enum_by_name(enum_name)?;
        e.get_value(number).map(|v| v.name().to_string())
    }

    /// The number of the value named `name` (case-sensitive, as protocol
    /// buffers are) of enum `enum_name`.
    pub fn enum_number(&self, enum_name: &str, name: &str) -> Option<i64> {
        let e = self.pool.get_enum_by_name(enum_name)?;
        e.get_value_by_name(name).map(|v| i64::from(v.number()))
    }

    /// Whether enum `enum_name` has a value numbered `number`.
    pub fn enum_has_number(&self, enum_name: &str, number: i64) -> bool {
        self.enum_name(enum_name, number).is_some()
    }
}

/// The GoogleSQL type of a message field: integers are INT64, `float`
/// FLOAT32, `double` FLOAT64, messages and enums their PROTO and ENUM
/// types, repeated fields arrays. `None` for map fields, which have no
/// GoogleSQL type here.
pub fn field_type(field: &FieldDescriptor) -> Option<Type> {
    if field.is_map() {
        return None;
    }
    let element = match field.kind() {
        Kind::Double => Type::Float64,
        Kind::Float => Type::Float32,
        Kind::Int32
        | Kind::Int64
        | Kind::Uint32
        | Kind::Uint64
        | Kind::Sint32
        | Kind::Sint64
        | Kind::Fixed32
        | Kind::Fixed64
        | Kind::Sfixed32
        | Kind::Sfixed64 => Type::Int64,
        Kind::Bool => Type::Bool,
        Kind::String => Type::String,
        Kind::Bytes => Type::Bytes,
        Kind::Message(m) => Type::Proto(m.full_name().to_string()),
        Kind::Enum(e) => Type::Enum(e.full_name().to_string()),
    };
    Some(if field.is_list() {
        Type::Array(Box::new(element))
    } else {
        element
    })
}

/// The value of `field` in the serialized message `bytes` (of the field's
/// containing message type). An unset message field is NULL; an unset
/// scalar field has its default value, as GoogleSQL reads protocol
/// buffers. The error says why the bytes do not decode.
pub fn read_field(bytes: &[u8], field: &FieldDescriptor) -> Result<Value, String> {
    let message = DynamicMessage::decode(field.parent_message().clone(), bytes)
        .map_err(|e| format!("Invalid {} value: {e}", field.parent_message().full_name()))?;
    if matches!(field.kind(), Kind::Message(_)) && !field.is_list() && !message.has_field(field) {
        return Ok(Value::Null);
    }
    let value = message.get_field(field);
    convert(&value)
}

fn convert(value: &prost_reflect::Value) -> Result<Value, String> {
    use prost_reflect::Value as V;
    Ok(match value {
        V::Bool(b) => Value::Bool(*b),
        V::I32(i) => Value::Int64(i64::from(*i)),
        V::I64(i) => Value::Int64(*i),
        V::U32(u) => Value::Int64(i64::from(*u)),
        // GoogleSQL in Spanner has no UINT64: the bits are read as INT64.
        V::U64(u) => Value::Int64(*u as i64),
        V::F32(f) => Value::Float32(*f),
        V::F64(f) => Value::Float64(*f),
        V::String(s) => Value::String(s.clone()),
        V::Bytes(b) => Value::Bytes(b.to_vec()),
        V::EnumNumber(n) => Value::Int64(i64::from(*n)),
        V::Message(m) => Value::Bytes(prost_reflect::prost::Message::encode_to_vec(m)),
        V::List(items) => Value::Array(items.iter().map(convert).collect::<Result<_, _>>()?),
        V::Map(_) => return Err("proto map fields are not supported".to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::prost::Message;
    use prost_reflect::prost_types::{
        field_descriptor_proto::{Label, Type as FieldType},
        DescriptorProto, EnumDescriptorProto, EnumValueDescriptorProto, FieldDescriptorProto,
        FileDescriptorProto, FileDescriptorSet,
    };

    fn bundle() -> ProtoBundle {
        let field = |name: &str, number: i32, ty: FieldType, type_name: Option<&str>| {
            FieldDescriptorProto {
                name: Some(name.into()),
                number: Some(number),
                label: Some(Label::Optional as i32),
                r#type: Some(ty as i32),
                type_name: type_name.map(String::from),
                ..Default::default()
            }
        };
        let file = FileDescriptorProto {
            name: Some("t.proto".into()),
            package: Some("t".into()),
            syntax: Some("proto2".into()),
            message_type: vec![DescriptorProto {
                name: Some("M".into()),
                field: vec![
                    field("id", 1, FieldType::Int64, None),
                    field("name", 2, FieldType::String, None),
                    field("color", 3, FieldType::Enum, Some(".t.Color")),
                    field("child", 4, FieldType::Message, Some(".t.M")),
                ],
                ..Default::default()
            }],
            enum_type: vec![EnumDescriptorProto {
                name: Some("Color".into()),
                value: vec![
                    EnumValueDescriptorProto {
                        name: Some("RED".into()),
                        number: Some(0),
                        ..Default::default()
                    },
                    EnumValueDescriptorProto {
                        name: Some("BLUE".into()),
                        number: Some(2),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let set = FileDescriptorSet { file: vec![file] };
        ProtoBundle::decode(&set.encode_to_vec()).unwrap()
    }

    #[test]
    fn kinds_and_enum_names() {
        let b = bundle();
        assert_eq!(b.type_of("t.M"), Some(Type::Proto("t.M".into())));
        assert_eq!(b.type_of("t.Color"), Some(Type::Enum("t.Color".into())));
        assert_eq!(b.type_of("t.Nope"), None);
        assert_eq!(b.enum_name("t.Color", 2).as_deref(), Some("BLUE"));
        assert_eq!(b.enum_name("t.Color", 1), None);
        assert_eq!(b.enum_number("t.Color", "RED"), Some(0));
        assert!(ProtoBundle::decode(b"\xff\xff").is_err());
    }

    #[test]
    fn fields_read_with_defaults() {
        let b = bundle();
        let m = b.message("t.M").unwrap();
        let id = m.get_field_by_name("id").unwrap();
        let name = m.get_field_by_name("name").unwrap();
        let child = m.get_field_by_name("child").unwrap();
        let color = m.get_field_by_name("color").unwrap();
        assert_eq!(field_type(&color), Some(Type::Enum("t.Color".into())));
        let mut msg = DynamicMessage::new(m.clone());
        msg.set_field(&id, prost_reflect::Value::I64(7));
        let bytes = msg.encode_to_vec();
        assert_eq!(read_field(&bytes, &id), Ok(Value::Int64(7)));
        assert_eq!(read_field(&bytes, &name), Ok(Value::String(String::new())));
        assert_eq!(read_field(&bytes, &child), Ok(Value::Null));
        assert!(read_field(b"\xff", &id).is_err());
    }
}
