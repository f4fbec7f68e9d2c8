//! [`named_registry!`]: the one way this crate turns a set of named components (apple's
//! rankings, its schedules, ...) into an enum. Each component is a type in its own file
//! implementing the registry's trait (which gives its `NAME`); the registry is one line per
//! component. The macro generates the enum with:
//!
//! * `NAMES` (what the Python layer offers and validates against) and `name()`;
//! * `parse(name)`, whose error names the option and lists the registered names (no catch-all:
//!   an unknown name is an error, never another component);
//! * serde by name (`TryFrom<String>` / `Into<String>`), so option structs and model files store
//!   the name, not a number a new component could shift;
//! * `visit(visitor)`: calls `visitor.visit::<Component>()`, so the code that uses a component is
//!   generic over the trait and statically dispatched (one `match` per call, no virtual call).

/// See the module docs. Syntax:
///
/// ```ignore
/// named_registry! {
///     /// docs of the enum
///     pub enum Ranking: RankingRule, visitor RankingVisitor, option "ranking" {
///         Magnitude => magnitude::Magnitude,
///         Ssm => ssm::Ssm,
///     }
/// }
/// ```
#[macro_export]
macro_rules! named_registry {
    (
        $(#[$meta:meta])*
        pub enum $name:ident : $rule:ident, visitor $visitor:ident, option $option:literal {
            $($variant:ident => $ty:ty),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub enum $name {
            $($variant,)*
        }

        /// Code generic over the registry's components, called through `visit`.
        pub trait $visitor {
            type Output;
            fn visit<C: $rule>(self) -> Self::Output;
        }

        impl $name {
            /// Every registered component's name, in registration order.
            pub const NAMES: &'static [&'static str] = &[$(<$ty as $rule>::NAME),*];

            /// The component's name.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => <$ty as $rule>::NAME,)*
                }
            }

            /// The component called `name`; the error names the option and the choices.
            pub fn parse(name: &str) -> $crate::error::PolyResult<Self> {
                $(if name == <$ty as $rule>::NAME {
                    return Ok($name::$variant);
                })*
                $crate::invalid!("{} must be one of {:?}, got {name:?}", $option, Self::NAMES)
            }

            /// Runs `visitor` with this component's type.
            #[inline]
            pub fn visit<V: $visitor>(self, visitor: V) -> V::Output {
                match self {
                    $($name::$variant => visitor.visit::<$ty>(),)*
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = $crate::error::PolyError;
            fn try_from(name: String) -> Result<Self, Self::Error> {
                Self::parse(&name)
            }
        }

        impl From<$name> for String {
            fn from(component: $name) -> String {
                component.name().to_owned()
            }
        }
    };
}
