import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { connectEvents } from './events';
import { httpTransport, ipcTransport, setTransport } from './transport';
import './styles.css';

setTransport(window.dropshoot ? ipcTransport(window.dropshoot) : httpTransport(''));
connectEvents();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
