import React from "react";

type Props = { items: string[] };

export const List = ({ items }: Props) => {
  return <ul>{items.map((item) => <li key={item}>{item}</li>)}</ul>;
};

export default function Page() {
  return <List items={["a", "b"]} />;
}
